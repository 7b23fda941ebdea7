<?php

/**
 * Webhooks from Narrator, and polling where they cannot reach the site.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Receives audio.processed and audio.failed, and polls audios being made.
 */
class Narrator_Webhooks
{
    /** Seconds a message's timestamp may be off. */
    public const TOLERANCE = 300;

    /**
     * Hooks.
     */
    public static function init()
    {
        add_action('rest_api_init', array(__CLASS__, 'routes'));
    }

    /**
     * The endpoint's URL.
     *
     * @return string
     */
    public static function url()
    {
        return rest_url('narrator/v1/webhook');
    }

    /**
     * Registers POST /wp-json/narrator/v1/webhook. Anyone may call it; only a
     * message signed with the endpoint's secret changes anything.
     */
    public static function routes()
    {
        register_rest_route(
            'narrator/v1',
            '/webhook',
            array(
                'methods'             => 'POST',
                'callback'            => array(__CLASS__, 'receive'),
                'permission_callback' => '__return_true',
            )
        );
    }

    /**
     * Handles a message.
     *
     * @param WP_REST_Request $request The request.
     * @return WP_REST_Response
     */
    public static function receive($request)
    {
        $body   = $request->get_body();
        $result = Narrator_Signer::verify_webhook(
            (string) get_option('narrator_webhook_secret', ''),
            (string) $request->get_header('webhook-id'),
            (string) $request->get_header('webhook-timestamp'),
            (string) $request->get_header('webhook-signature'),
            $body,
            time(),
            self::TOLERANCE
        );
        if (true !== $result) {
            return new WP_REST_Response(array('error' => $result), 401);
        }
        $event = json_decode($body, true);
        if (! is_array($event) || ! isset($event['action_type'])) {
            return new WP_REST_Response(array('error' => 'bad body'), 400);
        }
        if (! in_array($event['action_type'], array('audio.processed', 'audio.failed'), true) || empty($event['external_id'])) {
            return new WP_REST_Response(array('ok' => true), 200);
        }
        $post_id = self::post_for($event['external_id'], isset($event['id']) ? (int) $event['id'] : 0);
        if ($post_id) {
            Narrator_Sync::apply_audio($post_id, $event, isset($event['created_at']) ? (string) $event['created_at'] : gmdate('c'));
        }
        return new WP_REST_Response(array('ok' => true), 200);
    }

    /**
     * The post an audio belongs to on this site, or 0.
     *
     * @param string $external_id The audio's external_id.
     * @param int    $audio_id    The audio's id (0 to skip the check).
     * @return int
     */
    public static function post_for($external_id, $audio_id)
    {
        $parts = Narrator_Mapping::parse_external_id($external_id);
        if (null === $parts || Narrator_Plugin::site_key() !== $parts[0] || get_current_blog_id() !== $parts[1]) {
            return 0;
        }
        $post_id = $parts[2];
        $stored  = (int) get_post_meta($post_id, '_narrator_audio_id', true);
        if (! get_post($post_id) || ($audio_id && $stored !== $audio_id)) {
            return 0; // An audio this post no longer has.
        }
        return $post_id;
    }

    /**
     * Adds this site's endpoint to the project, or finds it. Keeps its id
     * and secret.
     *
     * @param Narrator_Client $client The client.
     * @param int             $pid    The project.
     * @return true|string True, or why not.
     */
    public static function register($client, $pid)
    {
        $url  = self::url();
        $list = $client->request('GET', Narrator_Client::project_path($pid, '/webhooks'));
        if (null !== $list['error'] || ! is_array($list['json'])) {
            return (string) $list['error'];
        }
        foreach ($list['json'] as $hook) {
            if (isset($hook['url']) && $hook['url'] === $url) {
                $hid = (int) $hook['id'];
                if ($hid === (int) get_option('narrator_webhook_id') && '' !== get_option('narrator_webhook_secret', '')) {
                    if (empty($hook['enabled'])) {
                        $client->request('POST', Narrator_Client::project_path($pid, '/webhooks/' . $hid . '/enable'));
                    }
                    return true;
                }
                $r = $client->request('POST', Narrator_Client::project_path($pid, '/webhooks/' . $hid . '/rotate-secret'));
                if (null !== $r['error'] || empty($r['json']['secret'])) {
                    return (string) $r['error'];
                }
                self::store($hid, $r['json']['secret'], $url);
                return true;
            }
        }
        $r = $client->request(
            'POST',
            Narrator_Client::project_path($pid, '/webhooks'),
            array(
                'url'    => $url,
                'events' => array('audio.processed', 'audio.failed'),
            )
        );
        if (null !== $r['error'] || empty($r['json']['secret'])) {
            return (string) $r['error'];
        }
        self::store((int) $r['json']['id'], $r['json']['secret'], $url);
        return true;
    }

    /**
     * Keeps an endpoint's id and secret.
     *
     * @param int    $id     The endpoint.
     * @param string $secret Its secret.
     * @param string $url    Its URL.
     */
    private static function store($id, $secret, $url)
    {
        update_option('narrator_webhook_id', (int) $id, false);
        update_option('narrator_webhook_secret', (string) $secret, false);
        update_option('narrator_webhook_url', (string) $url, false);
    }

    /**
     * Polls audios still being made (webhooks may not reach the site), and
     * reschedules posts whose sync event was lost.
     */
    public static function poll()
    {
        $s      = Narrator_Plugin::settings();
        $client = Narrator_Client::from_settings();
        $ids    = get_posts(
            array(
                'post_type'      => 'any',
                'post_status'    => 'any',
                'fields'         => 'ids',
                'posts_per_page' => 20,
                'orderby'        => 'modified',
                'order'          => 'ASC',
                'meta_query'     => array( // phpcs:ignore
                    array(
                        'key'     => '_narrator_state',
                        'value'   => array('queued', 'retrying', 'unprocessed'),
                        'compare' => 'IN',
                    ),
                ),
            )
        );
        foreach ($ids as $id) {
            $state = get_post_meta($id, '_narrator_state', true);
            if ('unprocessed' !== $state || '' === (string) get_post_meta($id, '_narrator_audio_id', true)) {
                if (! wp_next_scheduled('narrator_sync', array((int) $id))) {
                    Narrator_Sync::schedule($id);
                }
                continue;
            }
            $r = $client->request('GET', Narrator_Client::audio_path((int) $s['project_id'], Narrator_Plugin::external_id($id)), null, 10);
            if (null === $r['error'] && is_array($r['json']) && isset($r['json']['state']) && 'unprocessed' !== $r['json']['state']) {
                $audio = $r['json'];
                if ('processed' === $audio['state']) {
                    $audio['media'] = self::with_duration($client, (int) $s['project_id'], Narrator_Plugin::external_id($id), $audio['media']);
                }
                Narrator_Sync::apply_audio($id, $audio, null);
            }
        }
    }

    /**
     * The v3 Audio has no duration; the transcript's last sentence end gives it.
     *
     * @param Narrator_Client $client The client.
     * @param int             $pid    The project.
     * @param string          $xid    The external_id.
     * @param array           $media  The media.
     * @return array The media, the MP3's with a duration when known.
     */
    private static function with_duration($client, $pid, $xid, $media)
    {
        $r = $client->request('GET', Narrator_Client::audio_path($pid, $xid, '/transcript'), null, 10);
        if (null !== $r['error'] || ! is_array($r['json'])) {
            return $media;
        }
        $end = null;
        foreach (array('duration', 'duration_seconds') as $k) {
            if (isset($r['json'][$k])) {
                $end = (float) $r['json'][$k];
            }
        }
        if (null === $end && ! empty($r['json']['sentences'])) {
            $last = end($r['json']['sentences']);
            $end  = isset($last['end']) ? (float) $last['end'] : null;
        }
        foreach ($media as $i => $m) {
            if (null !== $end && isset($m['content_type']) && 'mp3' === $m['content_type']) {
                $media[$i]['duration'] = $end;
            }
        }
        return $media;
    }
}
