<?php

/**
 * The plugin in a real WordPress, against a fake Narrator.
 *
 * @package Narrator
 */

use PHPUnit\Framework\TestCase;

/**
 * End to end inside WordPress: saving, background sync, publication,
 * player, webhooks, uninstall.
 */
class PluginTest extends TestCase
{
    /** @var Narrator_Fake_Server */
    private $server;

    protected function setUp(): void
    {
        $this->server = new Narrator_Fake_Server();
        $this->server->start();
        wp_set_current_user(0);
        update_option('narrator_api_key', 'nk_test', false);
        update_option(
            'narrator_settings',
            array(
                'url'        => 'https://narrator.test',
                'project_id' => 1,
                'post_types' => array('post'),
                'auto'       => true,
                'placement'  => 'after',
                'signed'     => false,
            )
        );
        Narrator_Plugin::connect();
        $this->server->requests = array();
        $this->clear_cron();
    }

    protected function tearDown(): void
    {
        $this->server->stop();
    }

    /** Removes every pending event of the plugin. */
    private function clear_cron()
    {
        foreach (array('narrator_sync', 'narrator_delete') as $hook) {
            wp_unschedule_hook($hook);
        }
    }

    /**
     * Runs the plugin's pending single events, as WP-Cron would.
     *
     * @param int $ahead Also events due within this many seconds.
     * @return int How many ran.
     */
    private function run_cron($ahead = 0)
    {
        $ran = 0;
        foreach ((array) _get_cron_array() as $time => $hooks) {
            foreach ($hooks as $hook => $events) {
                if (! in_array($hook, array('narrator_sync', 'narrator_delete'), true) || $time > time() + $ahead) {
                    continue;
                }
                foreach ($events as $event) {
                    wp_unschedule_event($time, $hook, $event['args']);
                    do_action_ref_array($hook, $event['args']);
                    ++$ran;
                }
            }
        }
        return $ran;
    }

    /**
     * A post.
     *
     * @param array $args wp_insert_post arguments.
     * @return int
     */
    private function post(array $args = array())
    {
        $author = get_user_by('login', 'admin');
        wp_update_user(array('ID' => $author->ID, 'display_name' => 'Ada Lovelace'));
        return wp_insert_post(
            array_merge(
                array(
                    'post_title'   => 'A first post',
                    'post_content' => "<!-- wp:paragraph -->\n<p>It was a bright cold day in April.</p>\n<!-- /wp:paragraph -->\n\n"
                        . "<!-- wp:narrator/player /-->\n\n[narrator]\n\n[unknown_shortcode x=\"1\"]\n\n"
                        . "<!-- wp:paragraph -->\n<p>The clocks were striking thirteen.</p>\n<!-- /wp:paragraph -->",
                    'post_status'  => 'publish',
                    'post_author'  => $author->ID,
                ),
                $args
            )
        );
    }

    public function test_connect_sets_up_the_project()
    {
        $this->assertTrue($this->server->access['draft_new_audios'], 'new audios wait as drafts until the plugin publishes them');
        $this->assertFalse($this->server->access['download_button']);
        $this->assertSame('public', get_option('narrator_access_mode'));
        $this->assertCount(1, $this->server->webhooks);
        $hook = reset($this->server->webhooks);
        $this->assertSame(rest_url('narrator/v1/webhook'), $hook['url']);
        $this->assertSame(array('audio.processed', 'audio.failed'), $hook['events']);
        $this->assertSame('', get_option('narrator_connect_error'));
        Narrator_Plugin::connect();
        $this->assertCount(1, $this->server->webhooks, 'connecting again adds no second endpoint');
        update_option('narrator_settings', array_merge(Narrator_Plugin::settings(), array('download' => true)));
        $this->assertTrue($this->server->access['download_button'], 'the Download setting is the project\'s download button');
    }

    public function test_a_new_url_or_key_lists_the_projects_again()
    {
        if (! has_action('update_option_narrator_api_key', array('Narrator_Admin', 'forget_projects'))) {
            Narrator_Admin::init(); // What wp-admin hooks.
        }
        set_transient('narrator_projects', array(array('id' => 9, 'title' => 'Old', 'language' => 'en')), 300);
        update_option('narrator_api_key', 'nk_other', false);
        $this->assertFalse(get_transient('narrator_projects'), 'a new key');
        set_transient('narrator_projects', array(array('id' => 9, 'title' => 'Old', 'language' => 'en')), 300);
        update_option('narrator_settings', array_merge(Narrator_Plugin::settings(), array('url' => 'https://other.test')));
        $this->assertFalse(get_transient('narrator_projects'), 'a new URL');
    }

    public function test_connection_test_names_the_problem()
    {
        $this->assertTrue(Narrator_Client::from_settings()->test_connection(1)['ok']);
        $this->assertStringStartsWith('Project:', Narrator_Client::from_settings()->test_connection(7)['message']);
        $this->assertStringStartsWith('API key:', (new Narrator_Client('https://narrator.test', 'nk_wrong'))->test_connection(1)['message']);
        $this->assertStringStartsWith('URL:', (new Narrator_Client('ftp://narrator.test', 'nk_test'))->test_connection(1)['message']);
        $this->server->down = 'cURL error 60: SSL certificate problem: unable to get local issuer certificate';
        $this->assertStringStartsWith('TLS:', Narrator_Client::from_settings()->test_connection(1)['message']);
        $this->server->down = 'cURL error 7: Failed to connect to narrator.test port 443';
        $this->assertStringStartsWith('URL:', Narrator_Client::from_settings()->test_connection(1)['message']);
    }

    public function test_publishing_sends_in_the_background_once()
    {
        $id = $this->post();
        $this->assertSame(array(), $this->server->requests, 'saving never calls Narrator');
        $this->assertSame('queued', get_post_meta($id, '_narrator_state', true));
        $this->assertNotFalse(wp_next_scheduled('narrator_sync', array($id)));

        $this->run_cron();
        $xid = Narrator_Plugin::external_id($id);
        $this->assertSame(array('POST /api/v3/projects/1/audio', 'PUT /api/v3/projects/1/audio/' . $xid . '/publication'), $this->server->calls());
        $sent = $this->server->requests[0][2];
        $this->assertSame($xid, $sent['external_id']);
        $this->assertMatchesRegularExpression('/^wp-[a-z0-9]{8}-1-' . $id . '$/', $xid);
        $this->assertSame('A first post', $sent['title']);
        $this->assertSame('Ada Lovelace', $sent['author']);
        $this->assertSame(get_permalink($id), $sent['article_url']);
        $this->assertStringContainsString('<p>It was a bright cold day in April.</p>', $sent['body']);
        $this->assertStringContainsString('<p>The clocks were striking thirteen.</p>', $sent['body']);
        $this->assertStringNotContainsString('narrator', $sent['body'], 'no player, no shortcode');
        $this->assertStringNotContainsString('[', $sent['body'], 'shortcodes left out');
        $this->assertSame(array('state' => 'published'), $this->server->requests[1][2]);
        $this->assertSame('unprocessed', get_post_meta($id, '_narrator_state', true));

        // Saving again without a change sends nothing; a new title sends again.
        $this->server->requests = array();
        wp_update_post(array('ID' => $id, 'post_excerpt' => 'Only the excerpt changed'));
        $this->run_cron();
        $this->assertSame(array(), $this->server->requests);
        wp_update_post(array('ID' => $id, 'post_title' => 'A better title'));
        $this->run_cron();
        $this->assertSame(array('POST /api/v3/projects/1/audio'), $this->server->calls());
        $this->assertCount(1, $this->server->audios, 'one audio per post');
        $this->assertArrayNotHasKey('image_url', $this->server->requests[0][2]['metadata'], 'no featured image');

        // A featured image is sent as the audio's image.
        $this->server->requests = array();
        $image = wp_insert_attachment(array('post_mime_type' => 'image/jpeg', 'post_title' => 'Cover', 'post_status' => 'inherit'), '2030/01/cover.jpg', $id);
        set_post_thumbnail($id, $image);
        wp_update_post(array('ID' => $id)); // The editor saves the post with its featured image.
        $this->run_cron();
        $this->assertSame(array('POST /api/v3/projects/1/audio'), $this->server->calls());
        $this->assertSame(wp_upload_dir()['baseurl'] . '/2030/01/cover.jpg', $this->server->requests[0][2]['metadata']['image_url']);
    }

    public function test_narrator_down_is_retried_with_backoff()
    {
        $this->server->down = 'cURL error 7: Failed to connect';
        $id                 = $this->post();
        $this->run_cron();
        $this->assertSame('retrying', get_post_meta($id, '_narrator_state', true));
        $this->assertStringContainsString('Failed to connect', get_post_meta($id, '_narrator_error', true));
        $next = wp_next_scheduled('narrator_sync', array($id));
        $this->assertGreaterThanOrEqual(time() + 25, $next);
        $this->run_cron(40);
        $this->assertGreaterThanOrEqual(time() + 55, wp_next_scheduled('narrator_sync', array($id)), 'the wait doubles');

        $this->server->down = null;
        $this->run_cron(3600);
        $this->assertCount(1, $this->server->audios);
        $this->assertSame('unprocessed', get_post_meta($id, '_narrator_state', true));
        $this->assertSame('', get_post_meta($id, '_narrator_error', true));
        $this->assertFalse(wp_next_scheduled('narrator_sync', array($id)));
    }

    public function test_publication_follows_the_post()
    {
        $draft = $this->post(array('post_status' => 'draft'));
        $this->run_cron();
        $this->assertSame(array(), $this->server->requests, 'a draft gets no audio');

        $future = $this->post(array('post_status' => 'future', 'post_date' => '2035-06-01 10:00:00'));
        $this->run_cron();
        $xid = Narrator_Plugin::external_id($future);
        $this->assertSame('scheduled', $this->server->publications[$xid]['state']);
        $this->assertSame(Narrator_Mapping::rfc3339(get_post($future)->post_date_gmt), $this->server->publications[$xid]['publish_at']);

        $private = $this->post(array('post_status' => 'private'));
        $this->run_cron();
        $this->assertSame(array('state' => 'draft'), $this->server->publications[Narrator_Plugin::external_id($private)], 'a public project must not play a private post');

        $post = $this->post();
        $this->run_cron();
        $pxid = Narrator_Plugin::external_id($post);
        wp_trash_post($post);
        $this->run_cron();
        $this->assertSame(array('state' => 'draft'), $this->server->publications[$pxid]);
        wp_untrash_post($post);
        wp_publish_post($post);
        $this->run_cron();
        $this->assertSame(array('state' => 'published'), $this->server->publications[$pxid]);
        wp_delete_post($post, true);
        $this->run_cron();
        $this->assertArrayNotHasKey($pxid, $this->server->audios, 'deleted with the post');

        // The editor generates a draft's audio early: a Narrator draft.
        update_post_meta($draft, '_narrator_requested', 1);
        Narrator_Sync::schedule($draft);
        $this->run_cron();
        $this->assertSame(array('state' => 'draft'), $this->server->publications[Narrator_Plugin::external_id($draft)]);
    }

    public function test_deleting_a_post_waiting_for_narrator()
    {
        $this->server->down = 'cURL error 7: Failed to connect';
        $id                 = $this->post();
        $this->run_cron();
        $this->assertSame('retrying', get_post_meta($id, '_narrator_state', true));
        $xid = Narrator_Plugin::external_id($id);
        wp_delete_post($id, true);
        $this->assertFalse(wp_next_scheduled('narrator_sync', array($id)), 'the pending sync is dropped');
        $this->assertNotFalse(wp_next_scheduled('narrator_delete', array($xid, 0)), 'a create may have reached Narrator: delete');
        $this->server->down     = null;
        $this->server->requests = array();
        $this->run_cron(3600);
        $this->assertSame(array('DELETE /api/v3/projects/1/audio/' . $xid), $this->server->calls());
        $this->assertSame(array(), $this->server->audios);
    }

    public function test_no_audio_switch_deletes_the_audio()
    {
        $id = $this->post();
        $this->run_cron();
        update_post_meta($id, '_narrator_disabled', 1);
        Narrator_Sync::schedule($id);
        $this->run_cron();
        $this->assertSame(array(), $this->server->audios);
        $this->assertSame('none', get_post_meta($id, '_narrator_state', true));
        $this->assertSame('', Narrator_Player::markup(get_post($id)));
    }

    /**
     * Posts a signed webhook message to the plugin's REST route.
     *
     * @param array    $event The body.
     * @param int|null $time  The timestamp.
     * @param string   $secret The secret to sign with.
     * @return WP_REST_Response
     */
    private function webhook(array $event, $time = null, $secret = null)
    {
        $secret = null === $secret ? get_option('narrator_webhook_secret') : $secret;
        $time   = null === $time ? time() : $time;
        $body   = wp_json_encode($event);
        $key    = base64_decode(substr($secret, 6));
        $req    = new WP_REST_Request('POST', '/narrator/v1/webhook');
        $req->set_body($body);
        $req->set_header('content-type', 'application/json');
        $req->set_header('webhook-id', 'msg_0123456789abcdef0123456789abcdef');
        $req->set_header('webhook-timestamp', (string) $time);
        $req->set_header('webhook-signature', 'v1,' . base64_encode(hash_hmac('sha256', 'msg_0123456789abcdef0123456789abcdef.' . $time . '.' . $body, $key, true)));
        return rest_do_request($req);
    }

    public function test_webhooks_update_the_post()
    {
        $id = $this->post();
        $this->run_cron();
        $xid   = Narrator_Plugin::external_id($id);
        $event = array(
            'id'          => $this->server->audios[$xid]['id'],
            'external_id' => $xid,
            'state'       => 'processed',
            'media'       => array(
                array('id' => 1, 'content_type' => 'mp3', 'url' => 'https://narrator.test/media/x/audio.mp3', 'duration' => 185.4),
                array('id' => 2, 'content_type' => 'm3u8', 'url' => 'https://narrator.test/media/x/audio.m3u8', 'duration' => 185.4),
            ),
            'deleted'     => false,
            'metadata'    => array(),
            'action_type' => 'audio.processed',
            'project_id'  => 1,
            'created_at'  => gmdate('Y-m-d\TH:i:s\Z'),
        );
        $this->assertSame(401, $this->webhook($event, null, 'whsec_' . base64_encode('forged'))->get_status());
        $this->assertSame(401, $this->webhook($event, time() - 3600)->get_status(), 'too old');
        $this->assertSame('unprocessed', get_post_meta($id, '_narrator_state', true));

        $this->assertSame(200, $this->webhook($event)->get_status());
        $this->assertSame('processed', get_post_meta($id, '_narrator_state', true));
        $this->assertSame('Processed (3:05)', Narrator_Mapping::label('processed', get_post_meta($id, '_narrator_duration', true)));

        $failed = array_merge($event, array('state' => 'failed', 'error' => 'the voice crashed', 'action_type' => 'audio.failed', 'created_at' => gmdate('Y-m-d\TH:i:s\Z', time() + 1)));
        $this->assertSame(200, $this->webhook($failed)->get_status());
        $this->assertSame('failed', get_post_meta($id, '_narrator_state', true));
        $this->assertSame('the voice crashed', get_post_meta($id, '_narrator_error', true));

        $stale = array_merge($event, array('created_at' => gmdate('Y-m-d\TH:i:s\Z', time() - 60)));
        $this->webhook($stale);
        $this->assertSame('failed', get_post_meta($id, '_narrator_state', true), 'older news is ignored');
    }

    public function test_player_markup_and_signed_tokens()
    {
        $public = $this->post();
        $secret = $this->post(array('post_status' => 'private'));
        $locked = $this->post(array('post_password' => 'open sesame'));
        $this->run_cron();

        $html = Narrator_Player::markup(get_post($public));
        $this->assertStringContainsString('<div class="narrator-player"><script src="https://narrator.test/embed.js" data-project="1" data-external-id="' . Narrator_Plugin::external_id($public) . '"', $html);
        $this->assertStringNotContainsString('data-token', $html);
        $this->assertStringContainsString(' data-readalong="" data-article=".entry-content, .wp-block-post-content" async>', $html, 'the read-along in the post\'s content');
        $theme = function () {
            return '#main > .story';
        };
        add_filter('narrator_article_selector', $theme);
        $this->assertStringContainsString(' data-readalong="" data-article="#main &gt; .story" async>', Narrator_Player::markup(get_post($public)));
        remove_filter('narrator_article_selector', $theme);
        add_filter('narrator_article_selector', '__return_empty_string');
        $this->assertStringNotContainsString('data-readalong', Narrator_Player::markup(get_post($public)), "'' turns the read-along off");
        remove_filter('narrator_article_selector', '__return_empty_string');
        $this->assertSame('', Narrator_Player::markup(get_post($secret)), 'a public project plays no private post');

        // Signed access.
        $s           = Narrator_Plugin::settings();
        $s['signed'] = true;
        update_option('narrator_settings', $s);
        $this->assertSame('signed', $this->server->access['mode']);
        $this->assertTrue(Narrator_Plugin::signed());
        Narrator_Sync::bulk_batch();
        $this->run_cron();
        $this->assertSame(array('state' => 'published'), $this->server->publications[Narrator_Plugin::external_id($secret)]);

        $this->assertSame('', Narrator_Player::markup(get_post($secret)), 'an anonymous visitor gets no token');
        $this->assertSame('', Narrator_Player::markup(get_post($locked)), 'nor before the password');
        wp_set_current_user(get_user_by('login', 'admin')->ID);
        $html = Narrator_Player::markup(get_post($secret));
        $this->assertMatchesRegularExpression('/data-token="(\d+)\.([A-Za-z0-9_-]{43})"/', $html);
        preg_match('/data-token="(\d+)\.[^"]+"/', $html, $m);
        $this->assertStringContainsString(
            'data-token="' . Narrator_Signer::embed_token('nes_c2VjcmV0LWZvci10aGUtZG9jcy1vbmx5LWV4YW1wbGU', 1, (int) $m[1], 'external_id:' . Narrator_Plugin::external_id($secret)) . '"',
            $html
        );
        $this->assertEqualsWithDelta(time() + HOUR_IN_SECONDS, (int) $m[1], 5);

        // A membership plugin says no.
        $deny = function () {
            return false;
        };
        add_filter('narrator_visitor_can_listen', $deny);
        $this->assertSame('', Narrator_Player::markup(get_post($public)));
        remove_filter('narrator_visitor_can_listen', $deny);
    }

    public function test_bulk_generation_is_throttled()
    {
        update_option('narrator_settings', array_merge(Narrator_Plugin::settings(), array('auto' => false)));
        $this->server->requests = array();
        $ids = array();
        for ($i = 0; $i < 25; $i++) {
            $ids[] = $this->post(array('post_title' => 'Old post ' . $i));
        }
        $this->run_cron();
        $this->assertSame(array(), $this->server->requests, 'auto-generate off: nothing sent');
        Narrator_Sync::enqueue($ids, true);
        Narrator_Sync::bulk_batch();
        $this->run_cron(60);
        $this->assertCount(Narrator_Sync::BATCH, $this->server->audios, 'one batch a minute');
        Narrator_Sync::bulk_batch();
        $this->run_cron(60);
        $this->assertCount(2 * Narrator_Sync::BATCH, $this->server->audios);
    }

    public function test_uninstall_removes_options_and_meta()
    {
        $id = $this->post();
        $this->run_cron();
        $this->assertNotSame('', get_post_meta($id, '_narrator_hash', true));
        $waiting = $this->post(array('post_title' => 'Still waiting'));
        $this->assertNotFalse(wp_next_scheduled('narrator_sync', array($waiting)));
        add_option('narrator_lock_' . $waiting, time(), '', 'no');
        define('WP_UNINSTALL_PLUGIN', 'narrator/narrator.php');
        include dirname(__DIR__, 2) . '/uninstall.php';
        $this->assertSame('', get_post_meta($id, '_narrator_hash', true));
        $this->assertSame('', get_post_meta($id, '_narrator_state', true));
        foreach (Narrator_Plugin::OPTIONS as $option) {
            $this->assertFalse(get_option($option), $option);
        }
        $this->assertContains('DELETE /api/v3/projects/1/webhooks/1', $this->server->calls());
        $this->assertFalse(wp_next_scheduled('narrator_sync', array($waiting)), 'no event of the plugin is left');
        $this->assertFalse(get_option('narrator_lock_' . $waiting));
    }
}
