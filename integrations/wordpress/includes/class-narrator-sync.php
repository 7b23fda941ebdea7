<?php

/**
 * Sending posts to Narrator in the background, on WP-Cron.
 *
 * Saving a post only schedules an event; the event compares the post with
 * what was last sent and makes the calls, retrying with exponential backoff
 * when Narrator cannot be reached. Each run starts again from the post as it
 * is, so a retry or a duplicate run never sends stale content.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Keeps each post's audio in step with the post.
 */
class Narrator_Sync
{
    /** Attempts before a post's sync gives up (about 8 hours of backoff). */
    public const MAX_ATTEMPTS = 14;

    /** Bulk: posts scheduled per minute, and most posts in flight at once. */
    public const BATCH     = 10;
    public const IN_FLIGHT = 30;

    /**
     * Hooks.
     */
    public static function init()
    {
        add_action('wp_after_insert_post', array(__CLASS__, 'on_save'), 20, 2);
        add_action('transition_post_status', array(__CLASS__, 'on_transition'), 20, 3);
        add_action('before_delete_post', array(__CLASS__, 'on_delete'), 10, 1);
        add_action('narrator_sync', array(__CLASS__, 'run'), 10, 1);
        add_action('narrator_delete', array(__CLASS__, 'run_delete'), 10, 2);
        add_action('narrator_tick', array(__CLASS__, 'tick'));
    }

    /**
     * After a post and its meta are saved: schedule a sync when it concerns
     * Narrator. Never calls Narrator itself.
     *
     * @param int     $post_id The post.
     * @param WP_Post $post    The post.
     */
    public static function on_save($post_id, $post)
    {
        if (wp_is_post_revision($post_id) || wp_is_post_autosave($post_id) || 'auto-draft' === $post->post_status) {
            return;
        }
        if (self::concerns($post)) {
            self::schedule($post_id);
        }
    }

    /**
     * Status changes that do not go through wp_insert_post (a scheduled post
     * coming due, for one).
     *
     * @param string  $new  New status.
     * @param string  $old  Old status.
     * @param WP_Post $post The post.
     */
    public static function on_transition($new, $old, $post)
    {
        if ($new !== $old && 'auto-draft' !== $new && self::concerns($post)) {
            self::schedule($post->ID);
        }
    }

    /**
     * Whether a post's audio is the plugin's business.
     *
     * @param WP_Post $post The post.
     * @return bool
     */
    public static function concerns($post)
    {
        if (! Narrator_Plugin::configured()) {
            return false;
        }
        if ('' !== (string) get_post_meta($post->ID, '_narrator_audio_id', true) || get_post_meta($post->ID, '_narrator_requested', true)) {
            return true;
        }
        $s = Narrator_Plugin::settings();
        return Narrator_Plugin::type_enabled($post->post_type) && $s['auto'];
    }

    /**
     * Schedules a post's sync (replacing a retry waiting for later).
     *
     * @param int $post_id The post.
     * @param int $delay   Seconds from now.
     */
    public static function schedule($post_id, $delay = 0)
    {
        wp_clear_scheduled_hook('narrator_sync', array((int) $post_id));
        wp_schedule_single_event(time() + $delay, 'narrator_sync', array((int) $post_id));
        $state = (string) get_post_meta($post_id, '_narrator_state', true);
        if ('' === $state || 'none' === $state) {
            update_post_meta($post_id, '_narrator_state', 'queued');
        }
    }

    /**
     * A post is being deleted: its pending sync is dropped and its audio is
     * deleted in the background, also when a create may have reached
     * Narrator without its answer reaching the site.
     *
     * @param int $post_id The post.
     */
    public static function on_delete($post_id)
    {
        wp_clear_scheduled_hook('narrator_sync', array((int) $post_id));
        $state = (string) get_post_meta($post_id, '_narrator_state', true);
        $sent  = '' !== (string) get_post_meta($post_id, '_narrator_audio_id', true) || in_array($state, array('queued', 'retrying'), true);
        if (! $sent || ! Narrator_Plugin::configured()) {
            return;
        }
        wp_schedule_single_event(time(), 'narrator_delete', array(Narrator_Plugin::external_id($post_id), 0));
    }

    /**
     * Deletes an audio; retried with backoff.
     *
     * @param string $external_id The audio.
     * @param int    $attempt     Attempts so far.
     */
    public static function run_delete($external_id, $attempt)
    {
        $pid = (int) Narrator_Plugin::settings()['project_id'];
        $r   = Narrator_Client::from_settings()->request('DELETE', Narrator_Client::audio_path($pid, $external_id));
        if (null === $r['error'] || 404 === $r['status'] || 401 === $r['status']) {
            return;
        }
        if ($attempt + 1 < self::MAX_ATTEMPTS) {
            wp_schedule_single_event(time() + Narrator_Mapping::backoff($attempt + 1), 'narrator_delete', array($external_id, $attempt + 1));
        }
    }

    /**
     * The body a post sends: rendered with the_content's filters, without
     * shortcodes and without the plugin's own player.
     *
     * @param WP_Post $post The post.
     * @return array The create body.
     */
    public static function body($post)
    {
        $saved           = isset($GLOBALS['post']) ? $GLOBALS['post'] : null;
        $GLOBALS['post'] = $post; // phpcs:ignore -- the_content's filters read the global post.
        setup_postdata($post);
        Narrator_Player::$suspended = true;
        $shortcodes                 = has_filter('the_content', 'do_shortcode');
        if (false !== $shortcodes) {
            remove_filter('the_content', 'do_shortcode', $shortcodes);
        }
        $html = apply_filters('the_content', strip_shortcodes($post->post_content));
        if (false !== $shortcodes) {
            add_filter('the_content', 'do_shortcode', $shortcodes);
        }
        Narrator_Player::$suspended = false;
        $GLOBALS['post']            = $saved; // phpcs:ignore
        if ($saved) {
            setup_postdata($saved);
        }
        $body = Narrator_Mapping::audio_body(
            array(
                'external_id' => Narrator_Plugin::external_id($post->ID),
                'post_id'     => $post->ID,
                'title'       => apply_filters('the_title', $post->post_title, $post->ID),
                'author'      => get_the_author_meta('display_name', $post->post_author),
                'url'         => get_permalink($post),
                'html'        => $html,
                'image'       => get_the_post_thumbnail_url($post, 'full'),
            )
        );
        /**
         * Filters the body sent to Narrator for a post.
         *
         * @param array   $body The create body (title, body, author, article_url, external_id, metadata with image_url).
         * @param WP_Post $post The post.
         */
        return apply_filters('narrator_audio_body', $body, $post);
    }

    /**
     * The sync of one post (the narrator_sync event).
     *
     * @param int $post_id The post.
     */
    public static function run($post_id)
    {
        $post = get_post($post_id);
        if (! $post || ! Narrator_Plugin::configured()) {
            return;
        }
        $lock = 'narrator_lock_' . (int) $post_id;
        if (! add_option($lock, time(), '', 'no')) {
            if ((int) get_option($lock) > time() - 120) {
                self::schedule($post_id, 60);
                return;
            }
            update_option($lock, time(), false);
        }
        try {
            self::sync($post);
        } finally {
            delete_option($lock);
        }
    }

    /**
     * Compares the post with what Narrator has and makes the calls.
     *
     * @param WP_Post $post The post.
     */
    private static function sync($post)
    {
        $id        = $post->ID;
        $s         = Narrator_Plugin::settings();
        $pid       = (int) $s['project_id'];
        $client    = Narrator_Client::from_settings();
        $xid       = Narrator_Plugin::external_id($id);
        $has_audio = '' !== (string) get_post_meta($id, '_narrator_audio_id', true);

        if (get_post_meta($id, '_narrator_disabled', true) || (get_post_meta($id, '_narrator_force', true) && $has_audio)) {
            if ($has_audio) {
                $r = $client->request('DELETE', Narrator_Client::audio_path($pid, $xid));
                if (null !== $r['error'] && 404 !== $r['status']) {
                    self::failed($id, $r);
                    return;
                }
                foreach (array('_narrator_audio_id', '_narrator_hash', '_narrator_pub', '_narrator_duration', '_narrator_event_at') as $k) {
                    delete_post_meta($id, $k);
                }
                $has_audio = false;
            }
            if (get_post_meta($id, '_narrator_disabled', true)) {
                self::done($id, 'none');
                return;
            }
        }

        $wanted = $has_audio || get_post_meta($id, '_narrator_requested', true)
            || (Narrator_Plugin::type_enabled($post->post_type) && $s['auto']);
        $pub    = Narrator_Mapping::publication(
            $post->post_status,
            '' !== $post->post_password,
            Narrator_Plugin::signed(),
            (bool) get_post_meta($id, '_narrator_requested', true),
            $has_audio,
            $post->post_date_gmt
        );
        if (! $wanted || null === $pub) {
            if (! $has_audio) {
                self::done($id, 'none');
            }
            return;
        }

        $body = self::body($post);
        $hash = Narrator_Mapping::content_hash($body);
        if (! $has_audio || $hash !== get_post_meta($id, '_narrator_hash', true)) {
            if ('' === trim(wp_strip_all_tags($body['body']))) {
                self::done($id, 'none', __('The post has no text to read.', 'narrator'));
                return;
            }
            $r = $client->request('POST', Narrator_Client::project_path($pid, '/audio'), $body, 30);
            if (null !== $r['error'] || ! isset($r['json']['id'])) {
                self::failed($id, $r);
                return;
            }
            if ((int) $r['json']['id'] !== (int) get_post_meta($id, '_narrator_audio_id', true)) {
                delete_post_meta($id, '_narrator_pub'); // A new audio: its publication is set below.
            }
            update_post_meta($id, '_narrator_audio_id', (int) $r['json']['id']);
            update_post_meta($id, '_narrator_hash', $hash);
            delete_post_meta($id, '_narrator_force');
            self::apply_audio($id, $r['json'], null);
        }

        $want_pub = $pub['state'] . (isset($pub['publish_at']) ? '|' . $pub['publish_at'] : '');
        if ($want_pub !== get_post_meta($id, '_narrator_pub', true)) {
            $r = $client->request('PUT', Narrator_Client::audio_path($pid, $xid, '/publication'), $pub);
            if (404 === $r['status']) {
                // Deleted in Narrator meanwhile: create it again next time.
                delete_post_meta($id, '_narrator_audio_id');
                delete_post_meta($id, '_narrator_hash');
                self::schedule($id, 5);
                return;
            }
            if (null !== $r['error']) {
                self::failed($id, $r);
                return;
            }
            update_post_meta($id, '_narrator_pub', $want_pub);
        }
        delete_post_meta($id, '_narrator_attempts');
        delete_post_meta($id, '_narrator_error');
        if ('retrying' === get_post_meta($id, '_narrator_state', true) || 'queued' === get_post_meta($id, '_narrator_state', true)) {
            update_post_meta($id, '_narrator_state', 'unprocessed');
        }
    }

    /**
     * Records a post's state without audio.
     *
     * @param int    $id    The post.
     * @param string $state The state.
     * @param string $error Why, or empty.
     */
    private static function done($id, $state, $error = '')
    {
        update_post_meta($id, '_narrator_state', $state);
        delete_post_meta($id, '_narrator_attempts');
        if ('' === $error) {
            delete_post_meta($id, '_narrator_error');
        } else {
            update_post_meta($id, '_narrator_error', $error);
        }
    }

    /**
     * A call failed: keep the error, and retry with backoff unless the
     * request itself was refused.
     *
     * @param int   $id The post.
     * @param array $r  The client's result.
     */
    private static function failed($id, array $r)
    {
        $attempts = (int) get_post_meta($id, '_narrator_attempts', true) + 1;
        $error    = null !== $r['error'] ? $r['error'] : __('unexpected answer', 'narrator');
        update_post_meta($id, '_narrator_attempts', $attempts);
        update_post_meta($id, '_narrator_error', $error);
        $status    = (int) $r['status'];
        $permanent = in_array($status, array(400, 403, 413, 422), true);
        if ($permanent || $attempts >= self::MAX_ATTEMPTS) {
            update_post_meta($id, '_narrator_state', 'failed');
            return;
        }
        if ('' === (string) get_post_meta($id, '_narrator_audio_id', true)) {
            update_post_meta($id, '_narrator_state', 'retrying');
        }
        $delay = max(Narrator_Mapping::backoff($attempts), min(3600, (int) $r['retry_after']));
        wp_clear_scheduled_hook('narrator_sync', array((int) $id));
        wp_schedule_single_event(time() + $delay, 'narrator_sync', array((int) $id));
    }

    /**
     * Stores what Narrator says of a post's audio (an answer, a poll or a
     * webhook message). Older news than what is stored is ignored.
     *
     * @param int         $id    The post.
     * @param array       $audio The Audio or AudioEvent.
     * @param string|null $when  The event's created_at, or null.
     */
    public static function apply_audio($id, array $audio, $when)
    {
        if (null !== $when) {
            $t = strtotime($when);
            if (false !== $t && $t < (int) get_post_meta($id, '_narrator_event_at', true)) {
                return;
            }
            update_post_meta($id, '_narrator_event_at', false === $t ? time() : $t);
        }
        if (! isset($audio['state'])) {
            return;
        }
        update_post_meta($id, '_narrator_state', sanitize_key($audio['state']));
        if ('failed' === $audio['state']) {
            update_post_meta($id, '_narrator_error', sanitize_text_field(isset($audio['error']) ? $audio['error'] : __('Synthesis failed.', 'narrator')));
        } elseif ('processed' === $audio['state']) {
            delete_post_meta($id, '_narrator_error');
            $d = Narrator_Mapping::duration($audio);
            if (null !== $d) {
                update_post_meta($id, '_narrator_duration', $d);
            }
        }
    }

    /**
     * Every minute: bulk batches, a poll of audios being made, and posts
     * whose event was lost.
     */
    public static function tick()
    {
        if (! Narrator_Plugin::configured()) {
            return;
        }
        self::bulk_batch();
        Narrator_Webhooks::poll();
    }

    /**
     * Queues posts for generation ("Generate audio") or for a sync.
     *
     * @param int[] $ids      The posts.
     * @param bool  $generate Whether an editor asked for audio.
     * @return int How many were queued.
     */
    public static function enqueue(array $ids, $generate)
    {
        $queue = get_option('narrator_bulk_queue', array());
        $queue = is_array($queue) ? $queue : array();
        foreach ($ids as $id) {
            $queue[(int) $id] = $generate ? 1 : (isset($queue[(int) $id]) ? $queue[(int) $id] : 0);
        }
        update_option('narrator_bulk_queue', $queue, false);
        return count($ids);
    }

    /**
     * Every post with an audio syncs again (after the access mode changed).
     */
    public static function resync_all()
    {
        $ids = get_posts(
            array(
                'post_type'      => 'any',
                'post_status'    => 'any',
                'fields'         => 'ids',
                'posts_per_page' => -1,
                'meta_key'       => '_narrator_audio_id', // phpcs:ignore
            )
        );
        self::enqueue($ids, false);
    }

    /**
     * Schedules the next batch of the queue, while few audios are in flight.
     */
    public static function bulk_batch()
    {
        $queue = get_option('narrator_bulk_queue', array());
        if (! is_array($queue) || ! $queue) {
            return;
        }
        $busy = new WP_Query(
            array(
                'post_type'      => 'any',
                'post_status'    => 'any',
                'fields'         => 'ids',
                'posts_per_page' => 1,
                'meta_query'     => array( // phpcs:ignore
                    array(
                        'key'     => '_narrator_state',
                        'value'   => array('queued', 'unprocessed'),
                        'compare' => 'IN',
                    ),
                ),
            )
        );
        $room   = min(self::BATCH, self::IN_FLIGHT - (int) $busy->found_posts);
        $i      = 0;
        $resync = 0;
        foreach ($queue as $id => $generate) {
            // Generating waits for room; a sync of a post that has its audio
            // (publication after the access mode changed) only for its own cap.
            if ($generate ? $i >= $room : $resync >= 5 * self::BATCH) {
                continue;
            }
            $generate ? ++$i : ++$resync;
            unset($queue[$id]);
            if (! get_post($id)) {
                continue;
            }
            if ($generate) {
                update_post_meta($id, '_narrator_requested', 1);
            }
            self::schedule($id, $generate ? $i * 3 : 0);
        }
        update_option('narrator_bulk_queue', $queue, false);
    }
}
