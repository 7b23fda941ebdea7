<?php

/**
 * The admin: settings page, Audio column, bulk action and meta box.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Everything under wp-admin.
 */
class Narrator_Admin
{
    /**
     * Hooks.
     */
    public static function init()
    {
        add_action('admin_menu', array(__CLASS__, 'menu'));
        add_action('admin_init', array(__CLASS__, 'register_settings'));
        add_action('admin_init', array(__CLASS__, 'post_type_hooks'));
        add_action('add_meta_boxes', array(__CLASS__, 'meta_boxes'));
        add_action('save_post', array(__CLASS__, 'save_meta_box'), 10, 2);
        add_action('admin_post_narrator_test', array(__CLASS__, 'test_connection'));
        add_action('admin_post_narrator_generate', array(__CLASS__, 'generate'));
        add_action('admin_notices', array(__CLASS__, 'notices'));
        foreach (array('update_option_narrator_settings', 'add_option_narrator_settings', 'update_option_narrator_api_key') as $hook) {
            add_action($hook, array(__CLASS__, 'forget_projects'), 5, 0);
        }
    }

    /**
     * Forgets the key's projects listed on the settings page: a new URL or
     * key lists them again at once.
     */
    public static function forget_projects()
    {
        delete_transient('narrator_projects');
    }

    /**
     * Settings → Narrator.
     */
    public static function menu()
    {
        add_options_page(__('Narrator', 'narrator'), __('Narrator', 'narrator'), 'manage_options', 'narrator', array(__CLASS__, 'page'));
    }

    /**
     * The settings, through the Settings API.
     */
    public static function register_settings()
    {
        register_setting(
            'narrator',
            'narrator_settings',
            array(
                'type'              => 'array',
                'sanitize_callback' => array(__CLASS__, 'sanitize_settings'),
                'show_in_rest'      => false,
            )
        );
        register_setting(
            'narrator',
            'narrator_api_key',
            array(
                'type'              => 'string',
                'sanitize_callback' => array(__CLASS__, 'sanitize_key_option'),
                'show_in_rest'      => false,
            )
        );
    }

    /**
     * Sanitises the settings.
     *
     * @param mixed $in The submitted value.
     * @return array
     */
    public static function sanitize_settings($in)
    {
        $in    = is_array($in) ? $in : array();
        $types = array();
        foreach ((array) (isset($in['post_types']) ? $in['post_types'] : array()) as $t) {
            $t = sanitize_key($t);
            if (post_type_exists($t)) {
                $types[] = $t;
            }
        }
        $placement = isset($in['placement']) ? sanitize_key($in['placement']) : 'after';
        return array(
            'url'        => isset($in['url']) ? untrailingslashit(esc_url_raw(trim($in['url']), array('http', 'https'))) : '',
            'project_id' => isset($in['project_id']) ? absint($in['project_id']) : 0,
            'post_types' => $types,
            'auto'       => ! empty($in['auto']),
            'placement'  => in_array($placement, array('before', 'after', 'manual'), true) ? $placement : 'after',
            'signed'     => ! empty($in['signed']),
            'download'   => ! empty($in['download']),
        );
    }

    /**
     * The API key: an empty field keeps the stored key, which is never
     * printed back.
     *
     * @param mixed $in The submitted value.
     * @return string
     */
    public static function sanitize_key_option($in)
    {
        $in = trim(sanitize_text_field((string) $in));
        if ('' === $in) {
            return (string) get_option('narrator_api_key', '');
        }
        return $in;
    }

    /**
     * The settings page.
     */
    public static function page()
    {
        if (! current_user_can('manage_options')) {
            return;
        }
        $s        = Narrator_Plugin::settings();
        $has_key  = '' !== (string) get_option('narrator_api_key', '');
        $projects = array();
        if ('' !== $s['url'] && $has_key) {
            $projects = get_transient('narrator_projects');
            if (false === $projects) {
                $r        = Narrator_Client::from_settings()->request('GET', '/api/v3/projects', null, 8);
                $projects = null === $r['error'] && is_array($r['json']) ? $r['json'] : array();
                if ($projects) { // A failure is not kept: the next visit asks again.
                    set_transient('narrator_projects', $projects, 5 * MINUTE_IN_SECONDS);
                }
            }
        }
        $result = get_transient('narrator_test_' . get_current_user_id());
        delete_transient('narrator_test_' . get_current_user_id());
        ?>
        <div class="wrap">
            <h1><?php esc_html_e('Narrator', 'narrator'); ?></h1>
            <?php if (is_array($result)) : ?>
                <div id="narrator-test-result" class="notice <?php echo $result['ok'] ? 'notice-success' : 'notice-error'; ?>"><p><?php echo esc_html($result['message']); ?></p></div>
            <?php endif; ?>
            <form method="post" action="options.php">
                <?php settings_fields('narrator'); ?>
                <table class="form-table" role="presentation">
                    <tr>
                        <th scope="row"><label for="narrator-url"><?php esc_html_e('Narrator server URL', 'narrator'); ?></label></th>
                        <td><input type="url" id="narrator-url" class="regular-text" name="narrator_settings[url]" value="<?php echo esc_attr($s['url']); ?>" placeholder="https://audio.example.com" /></td>
                    </tr>
                    <tr>
                        <th scope="row"><label for="narrator-key"><?php esc_html_e('API key', 'narrator'); ?></label></th>
                        <td>
                            <input type="password" id="narrator-key" class="regular-text" name="narrator_api_key" value="" autocomplete="off" placeholder="<?php echo $has_key ? esc_attr__('Stored; leave empty to keep it', 'narrator') : 'nk_…'; ?>" />
                        </td>
                    </tr>
                    <tr>
                        <th scope="row"><label for="narrator-project"><?php esc_html_e('Project', 'narrator'); ?></label></th>
                        <td>
                            <?php if ($projects) : ?>
                                <select id="narrator-project" name="narrator_settings[project_id]">
                                    <option value="0"><?php esc_html_e('Choose a project', 'narrator'); ?></option>
                                    <?php foreach ($projects as $p) : ?>
                                        <option value="<?php echo esc_attr((int) $p['id']); ?>" <?php selected((int) $s['project_id'], (int) $p['id']); ?>><?php echo esc_html($p['title'] . ' (' . $p['language'] . ')'); ?></option>
                                    <?php endforeach; ?>
                                </select>
                            <?php else : ?>
                                <input type="number" min="0" id="narrator-project" name="narrator_settings[project_id]" value="<?php echo esc_attr((int) $s['project_id']); ?>" />
                                <p class="description"><?php esc_html_e('Save the URL and key first: the key\'s projects are listed here then.', 'narrator'); ?></p>
                            <?php endif; ?>
                        </td>
                    </tr>
                    <tr>
                        <th scope="row"><?php esc_html_e('Post types', 'narrator'); ?></th>
                        <td>
                            <?php foreach (get_post_types(array('public' => true), 'objects') as $type) : ?>
                                <?php
                                if ('attachment' === $type->name) {
                                    continue;
                                }
                                ?>
                                <label><input type="checkbox" name="narrator_settings[post_types][]" value="<?php echo esc_attr($type->name); ?>" <?php checked(in_array($type->name, (array) $s['post_types'], true)); ?> /> <?php echo esc_html($type->labels->name); ?></label><br />
                            <?php endforeach; ?>
                        </td>
                    </tr>
                    <tr>
                        <th scope="row"><?php esc_html_e('Generate', 'narrator'); ?></th>
                        <td><label><input type="checkbox" name="narrator_settings[auto]" value="1" <?php checked($s['auto']); ?> /> <?php esc_html_e('Generate audio when a post is published or updated', 'narrator'); ?></label></td>
                    </tr>
                    <tr>
                        <th scope="row"><label for="narrator-placement"><?php esc_html_e('Player placement', 'narrator'); ?></label></th>
                        <td>
                            <select id="narrator-placement" name="narrator_settings[placement]">
                                <option value="before" <?php selected($s['placement'], 'before'); ?>><?php esc_html_e('Before the content', 'narrator'); ?></option>
                                <option value="after" <?php selected($s['placement'], 'after'); ?>><?php esc_html_e('After the content', 'narrator'); ?></option>
                                <option value="manual" <?php selected($s['placement'], 'manual'); ?>><?php esc_html_e('Only where the Narrator block or [narrator] shortcode is', 'narrator'); ?></option>
                            </select>
                        </td>
                    </tr>
                    <tr>
                        <th scope="row"><?php esc_html_e('Download', 'narrator'); ?></th>
                        <td><label><input type="checkbox" name="narrator_settings[download]" value="1" <?php checked($s['download']); ?> /> <?php esc_html_e('The player offers a button that downloads the MP3', 'narrator'); ?></label></td>
                    </tr>
                    <tr>
                        <th scope="row"><?php esc_html_e('Signed access', 'narrator'); ?></th>
                        <td>
                            <label><input type="checkbox" name="narrator_settings[signed]" value="1" <?php checked($s['signed']); ?> /> <?php esc_html_e('Play audio only with a token this site signs for readers who may read the post (needed for private and password-protected posts)', 'narrator'); ?></label>
                            <p class="description"><?php echo esc_html(Narrator_Plugin::signed() ? __('The project is signed; this site holds its signing secret.', 'narrator') : __('The project is public: private and password-protected posts get no player.', 'narrator')); ?></p>
                        </td>
                    </tr>
                </table>
                <?php submit_button(); ?>
            </form>
            <form method="post" action="<?php echo esc_url(admin_url('admin-post.php')); ?>">
                <input type="hidden" name="action" value="narrator_test" />
                <?php wp_nonce_field('narrator_test'); ?>
                <?php submit_button(__('Test connection', 'narrator'), 'secondary', 'narrator-test', false); ?>
            </form>
            <p class="description">
                <?php
                /* translators: %s: the webhook URL. */
                echo esc_html(sprintf(__('Webhook endpoint: %s (where Narrator cannot reach it, the plugin polls every minute).', 'narrator'), Narrator_Webhooks::url()));
                ?>
            </p>
        </div>
        <?php
    }

    /**
     * The "Test connection" button.
     */
    public static function test_connection()
    {
        if (! current_user_can('manage_options')) {
            wp_die(esc_html__('You may not change Narrator\'s settings.', 'narrator'), 403);
        }
        check_admin_referer('narrator_test');
        $s      = Narrator_Plugin::settings();
        $result = Narrator_Client::from_settings()->test_connection((int) $s['project_id']);
        unset($result['projects']);
        delete_transient('narrator_projects');
        set_transient('narrator_test_' . get_current_user_id(), $result, MINUTE_IN_SECONDS);
        wp_safe_redirect(admin_url('options-general.php?page=narrator'));
        exit;
    }

    /**
     * Problems left by the last set-up of the project, for admins.
     */
    public static function notices()
    {
        if (! current_user_can('manage_options')) {
            return;
        }
        $error = (string) get_option('narrator_connect_error', '');
        if ('' !== $error) {
            echo '<div class="notice notice-warning"><p><strong>' . esc_html__('Narrator:', 'narrator') . '</strong> ' . esc_html($error) . '</p></div>';
        }
        if (isset($_GET['narrator_queued'])) { // phpcs:ignore -- a count to show, nothing is changed.
            $n = absint($_GET['narrator_queued']); // phpcs:ignore
            /* translators: %d: a number of posts. */
            $text = sprintf(_n('%d post queued for audio; they are sent in small batches.', '%d posts queued for audio; they are sent in small batches.', $n, 'narrator'), $n);
            echo '<div class="notice notice-success is-dismissible"><p>' . esc_html($text) . '</p></div>';
        }
    }

    /**
     * Column and bulk action hooks for each narrated post type.
     */
    public static function post_type_hooks()
    {
        foreach ((array) Narrator_Plugin::settings()['post_types'] as $type) {
            add_filter('manage_' . $type . '_posts_columns', array(__CLASS__, 'columns'));
            add_action('manage_' . $type . '_posts_custom_column', array(__CLASS__, 'column'), 10, 2);
            add_filter('bulk_actions-edit-' . $type, array(__CLASS__, 'bulk_actions'));
            add_filter('handle_bulk_actions-edit-' . $type, array(__CLASS__, 'handle_bulk'), 10, 3);
        }
    }

    /**
     * Adds the Audio column.
     *
     * @param array $columns Columns.
     * @return array
     */
    public static function columns($columns)
    {
        $columns['narrator'] = __('Audio', 'narrator');
        return $columns;
    }

    /**
     * Prints a post's Audio column.
     *
     * @param string $column  The column.
     * @param int    $post_id The post.
     */
    public static function column($column, $post_id)
    {
        if ('narrator' !== $column) {
            return;
        }
        $state = (string) get_post_meta($post_id, '_narrator_state', true);
        if (get_post_meta($post_id, '_narrator_disabled', true)) {
            $state = 'off';
        }
        $label = 'off' === $state ? __('Off', 'narrator') : Narrator_Mapping::label($state, get_post_meta($post_id, '_narrator_duration', true));
        echo '<span class="narrator-state narrator-state-' . esc_attr($state ? $state : 'none') . '">' . esc_html($label) . '</span>';
        $error = (string) get_post_meta($post_id, '_narrator_error', true);
        if ('' !== $error) {
            echo '<br /><small title="' . esc_attr($error) . '">' . esc_html(wp_trim_words($error, 8)) . '</small>';
        }
    }

    /**
     * Adds "Generate audio".
     *
     * @param array $actions Actions.
     * @return array
     */
    public static function bulk_actions($actions)
    {
        $actions['narrator_generate'] = __('Generate audio', 'narrator');
        return $actions;
    }

    /**
     * Queues the chosen posts; WP-Cron sends them in small batches.
     *
     * @param string $redirect The URL to go back to.
     * @param string $action   The action.
     * @param int[]  $ids      The posts.
     * @return string
     */
    public static function handle_bulk($redirect, $action, $ids)
    {
        if ('narrator_generate' !== $action) {
            return $redirect;
        }
        $allowed = array();
        foreach ((array) $ids as $id) {
            if (current_user_can('edit_post', (int) $id)) {
                delete_post_meta((int) $id, '_narrator_disabled');
                $allowed[] = (int) $id;
            }
        }
        $n = Narrator_Sync::enqueue($allowed, true);
        return add_query_arg('narrator_queued', $n, $redirect);
    }

    /**
     * The meta box on narrated post types.
     */
    public static function meta_boxes()
    {
        foreach ((array) Narrator_Plugin::settings()['post_types'] as $type) {
            add_meta_box('narrator', __('Audio (Narrator)', 'narrator'), array(__CLASS__, 'meta_box'), $type, 'side');
        }
    }

    /**
     * Prints the meta box: state, last error, generate button, opt-out.
     *
     * @param WP_Post $post The post.
     */
    public static function meta_box($post)
    {
        $state = (string) get_post_meta($post->ID, '_narrator_state', true);
        $error = (string) get_post_meta($post->ID, '_narrator_error', true);
        $has   = '' !== (string) get_post_meta($post->ID, '_narrator_audio_id', true);
        wp_nonce_field('narrator_meta_' . $post->ID, 'narrator_meta_nonce');
        echo '<p>' . esc_html__('State:', 'narrator') . ' <strong class="narrator-state">' . esc_html(Narrator_Mapping::label($state, get_post_meta($post->ID, '_narrator_duration', true))) . '</strong></p>';
        if ('' !== $error) {
            echo '<p class="narrator-error">' . esc_html__('Last error:', 'narrator') . ' ' . esc_html($error) . '</p>';
        }
        echo '<p><label><input type="checkbox" name="narrator_disabled" value="1" ' . checked((bool) get_post_meta($post->ID, '_narrator_disabled', true), true, false) . ' /> ' . esc_html__('No audio for this post', 'narrator') . '</label></p>';
        if ('auto-draft' !== $post->post_status) {
            $url = wp_nonce_url(admin_url('admin-post.php?action=narrator_generate&post=' . $post->ID), 'narrator_generate_' . $post->ID);
            echo '<p><a class="button" href="' . esc_url($url) . '">' . esc_html($has ? __('Resynthesize audio', 'narrator') : __('Generate audio now', 'narrator')) . '</a></p>';
        }
    }

    /**
     * Saves the "no audio for this post" switch.
     *
     * @param int     $post_id The post.
     * @param WP_Post $post    The post.
     */
    public static function save_meta_box($post_id, $post)
    {
        if (! isset($_POST['narrator_meta_nonce']) || ! wp_verify_nonce(sanitize_key(wp_unslash($_POST['narrator_meta_nonce'])), 'narrator_meta_' . $post_id)) {
            return;
        }
        if ((defined('DOING_AUTOSAVE') && DOING_AUTOSAVE) || ! current_user_can('edit_post', $post_id)) {
            return;
        }
        $off    = ! empty($_POST['narrator_disabled']);
        $before = (bool) get_post_meta($post_id, '_narrator_disabled', true);
        if ($off) {
            update_post_meta($post_id, '_narrator_disabled', 1);
        } else {
            delete_post_meta($post_id, '_narrator_disabled');
        }
        if ($off !== $before && Narrator_Plugin::configured()) {
            Narrator_Sync::schedule($post_id);
        }
    }

    /**
     * The meta box's "Generate audio now" / "Resynthesize audio" button: the
     * audio is made again from the post as it is (also for a draft, which
     * then gets a Narrator draft).
     */
    public static function generate()
    {
        $post_id = isset($_GET['post']) ? absint($_GET['post']) : 0; // phpcs:ignore -- checked by the nonce below.
        check_admin_referer('narrator_generate_' . $post_id);
        if (! $post_id || ! current_user_can('edit_post', $post_id)) {
            wp_die(esc_html__('You may not edit this post.', 'narrator'), 403);
        }
        delete_post_meta($post_id, '_narrator_disabled');
        update_post_meta($post_id, '_narrator_requested', 1);
        if ('' !== (string) get_post_meta($post_id, '_narrator_audio_id', true)) {
            update_post_meta($post_id, '_narrator_force', 1);
        }
        delete_post_meta($post_id, '_narrator_attempts');
        update_post_meta($post_id, '_narrator_state', 'queued');
        Narrator_Sync::schedule($post_id);
        wp_safe_redirect(get_edit_post_link($post_id, 'url'));
        exit;
    }
}
