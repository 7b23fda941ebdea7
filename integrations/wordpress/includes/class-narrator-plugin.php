<?php

/**
 * Settings, activation and the connection to the project.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * The plugin's settings and its set-up of the Narrator project.
 */
class Narrator_Plugin
{
    /** Options holding secrets: never autoloaded, never printed. */
    public const SECRET_OPTIONS = array('narrator_api_key', 'narrator_signing_secret', 'narrator_webhook_secret');

    /** Every option the plugin stores (uninstall.php removes them). */
    public const OPTIONS = array(
        'narrator_settings',
        'narrator_api_key',
        'narrator_signing_secret',
        'narrator_webhook_secret',
        'narrator_webhook_id',
        'narrator_webhook_url',
        'narrator_site_key',
        'narrator_access_mode',
        'narrator_bulk_queue',
        'narrator_connect_error',
    );

    /** Every post meta key (uninstall.php removes them). */
    public const META = array(
        '_narrator_state',
        '_narrator_error',
        '_narrator_duration',
        '_narrator_audio_id',
        '_narrator_hash',
        '_narrator_pub',
        '_narrator_attempts',
        '_narrator_requested',
        '_narrator_disabled',
        '_narrator_force',
        '_narrator_event_at',
    );

    /**
     * Hooks everything.
     */
    public static function init()
    {
        add_action('init', array(__CLASS__, 'load_textdomain'));
        add_filter('cron_schedules', array(__CLASS__, 'cron_schedules'));
        add_action('update_option_narrator_settings', array(__CLASS__, 'connect'), 10, 0);
        add_action('add_option_narrator_settings', array(__CLASS__, 'connect'), 10, 0);
        add_action('update_option_narrator_api_key', array(__CLASS__, 'connect'), 10, 0);
        Narrator_Sync::init();
        Narrator_Player::init();
        Narrator_Webhooks::init();
        if (is_admin()) {
            Narrator_Admin::init();
        }
    }

    /**
     * Loads translations.
     */
    public static function load_textdomain()
    {
        load_plugin_textdomain('narrator', false, dirname(plugin_basename(NARRATOR_FILE)) . '/languages');
    }

    /**
     * A one-minute WP-Cron schedule for polling and bulk batches.
     *
     * @param array $schedules The schedules.
     * @return array
     */
    public static function cron_schedules($schedules)
    {
        $schedules['narrator_minute'] = array(
            'interval' => 60,
            'display'  => __('Every minute (Narrator)', 'narrator'),
        );
        return $schedules;
    }

    /**
     * Activation: the site key and the recurring events.
     */
    public static function activate()
    {
        self::site_key();
        foreach (self::SECRET_OPTIONS as $option) {
            add_option($option, '', '', 'no'); // Created here so that they are never autoloaded.
        }
        if (! wp_next_scheduled('narrator_tick')) {
            wp_schedule_event(time() + 60, 'narrator_minute', 'narrator_tick');
        }
    }

    /**
     * Deactivation: recurring events stop; settings and meta stay.
     */
    public static function deactivate()
    {
        wp_clear_scheduled_hook('narrator_tick');
    }

    /**
     * The settings with their defaults.
     *
     * @return array
     */
    public static function settings()
    {
        $s = get_option('narrator_settings', array());
        return wp_parse_args(
            is_array($s) ? $s : array(),
            array(
                'url'        => '',
                'project_id' => 0,
                'post_types' => array('post'),
                'auto'       => true,
                'placement'  => 'after',
                'signed'     => false,
                'download'   => false,
            )
        );
    }

    /**
     * Whether URL, key and project are set.
     *
     * @return bool
     */
    public static function configured()
    {
        $s = self::settings();
        return '' !== $s['url'] && (int) $s['project_id'] > 0 && '' !== (string) get_option('narrator_api_key', '');
    }

    /**
     * Whether the project is signed and this site holds its secret.
     *
     * @return bool
     */
    public static function signed()
    {
        return 'signed' === get_option('narrator_access_mode', 'public') && '' !== (string) get_option('narrator_signing_secret', '');
    }

    /**
     * A random identifier of the installation, kept network-wide on
     * multisite: part of every external_id.
     *
     * @return string
     */
    public static function site_key()
    {
        $key = get_site_option('narrator_site_key', '');
        if (! is_string($key) || ! preg_match('/^[a-z0-9]{8}$/', $key)) {
            $key = strtolower(wp_generate_password(8, false, false));
            update_site_option('narrator_site_key', $key);
        }
        return $key;
    }

    /**
     * The external_id of a post.
     *
     * @param int $post_id The post.
     * @return string
     */
    public static function external_id($post_id)
    {
        $id = Narrator_Mapping::external_id(self::site_key(), get_current_blog_id(), $post_id);
        /**
         * Filters the external_id a post's audio has in Narrator.
         *
         * @param string $id      The external_id.
         * @param int    $post_id The post.
         */
        return (string) apply_filters('narrator_external_id', $id, $post_id);
    }

    /**
     * Whether a post type is narrated.
     *
     * @param string $type The post type.
     * @return bool
     */
    public static function type_enabled($type)
    {
        return in_array($type, (array) self::settings()['post_types'], true);
    }

    /**
     * Sets the project up after the settings change: new audios wait as
     * drafts (the plugin publishes them with their post), the download
     * button, the access mode, the signing secret and the webhook endpoint. Problems are kept for an
     * admin notice.
     */
    public static function connect()
    {
        static $running = false;
        if ($running || ! self::configured()) {
            return;
        }
        $running = true;
        $s       = self::settings();
        $pid     = (int) $s['project_id'];
        $client  = Narrator_Client::from_settings();
        $test    = $client->test_connection($pid);
        if (! $test['ok']) {
            update_option('narrator_connect_error', $test['message'], false);
            $running = false;
            return;
        }
        $errors = array();
        $access = array('draft_new_audios' => true, 'download_button' => (bool) $s['download']);
        if ($s['signed']) {
            if ('' === (string) get_option('narrator_signing_secret', '')) {
                $r = $client->request('POST', Narrator_Client::project_path($pid, '/access/rotate-secret'));
                if (null === $r['error'] && ! empty($r['json']['signing_secret'])) {
                    update_option('narrator_signing_secret', (string) $r['json']['signing_secret'], false);
                } else {
                    $errors[] = __('Signing secret:', 'narrator') . ' ' . $r['error'];
                }
            }
            $access['mode'] = 'signed';
        } else {
            $access['mode'] = 'public';
        }
        $r = $client->request('PUT', Narrator_Client::project_path($pid, '/access'), $access);
        if (null === $r['error'] && isset($r['json']['mode'])) {
            $before = get_option('narrator_access_mode', '');
            update_option('narrator_access_mode', (string) $r['json']['mode'], false);
            if ($before !== $r['json']['mode']) {
                Narrator_Sync::resync_all();
            }
        } else {
            $errors[] = __('Access settings:', 'narrator') . ' ' . $r['error'];
        }
        $hook = Narrator_Webhooks::register($client, $pid);
        if (true !== $hook) {
            /* translators: %s: why. */
            $errors[] = sprintf(__('Webhook endpoint not added (%s); the plugin polls Narrator instead.', 'narrator'), $hook);
        }
        update_option('narrator_connect_error', implode(' ', $errors), false);
        if (! wp_next_scheduled('narrator_tick')) {
            wp_schedule_event(time() + 60, 'narrator_minute', 'narrator_tick');
        }
        $running = false;
    }
}
