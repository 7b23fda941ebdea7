<?php

/**
 * The plugin against a real Narrator server, when one is given:
 * NARRATOR_TEST_URL (on loopback) and NARRATOR_TEST_KEY (a key of project 1).
 *
 * @package Narrator
 */

use PHPUnit\Framework\TestCase;

/**
 * Checks the plugin's requests against the server's real answers.
 */
class RealServerTest extends TestCase
{
    protected function setUp(): void
    {
        if (! getenv('NARRATOR_TEST_URL') || ! getenv('NARRATOR_TEST_KEY')) {
            $this->markTestSkipped('NARRATOR_TEST_URL and NARRATOR_TEST_KEY name a running Narrator');
        }
    }

    public function test_a_post_against_a_real_server()
    {
        $url = getenv('NARRATOR_TEST_URL');
        update_option('narrator_api_key', getenv('NARRATOR_TEST_KEY'), false);
        update_option('narrator_settings', array('url' => $url, 'project_id' => 1, 'post_types' => array('post'), 'auto' => true, 'placement' => 'after', 'signed' => true));
        $test = Narrator_Client::from_settings()->test_connection(1);
        $this->assertTrue($test['ok'], $test['message']);
        $this->assertTrue(Narrator_Plugin::signed(), (string) get_option('narrator_connect_error'));

        $id = wp_insert_post(array('post_title' => 'Real server', 'post_content' => '<p>Hello from WordPress.</p>', 'post_status' => 'private'));
        do_action('narrator_sync', $id);
        $this->assertSame('', (string) get_post_meta($id, '_narrator_error', true));
        $xid    = Narrator_Plugin::external_id($id);
        $client = Narrator_Client::from_settings();
        $pub    = $client->request('GET', Narrator_Client::audio_path(1, $xid, '/publication'));
        $this->assertSame('published', $pub['json']['state']);

        // The player page: 404 without a token, 200 with the plugin's.
        wp_set_current_user(1);
        preg_match('/data-token="([^"]+)"/', Narrator_Player::markup(get_post($id)), $m);
        $this->assertNotEmpty($m);
        $plain = wp_remote_get($url . '/embed/1?external_id=' . rawurlencode($xid));
        $this->assertSame(404, wp_remote_retrieve_response_code($plain));
        $signed = wp_remote_get($url . '/embed/1?external_id=' . rawurlencode($xid) . '&token=' . rawurlencode($m[1]));
        $this->assertSame(200, wp_remote_retrieve_response_code($signed));

        // Scheduled, then trashed, then deleted.
        wp_update_post(array('ID' => $id, 'post_status' => 'future', 'post_date' => '2035-01-01 00:00:00', 'post_date_gmt' => '2035-01-01 00:00:00'));
        do_action('narrator_sync', $id);
        $pub = $client->request('GET', Narrator_Client::audio_path(1, $xid, '/publication'));
        $this->assertSame('scheduled', $pub['json']['state'], get_post_status($id) . ' ' . get_post_meta($id, '_narrator_error', true));
        $this->assertSame('2035-01-01T00:00:00Z', $pub['json']['publish_at']);
        wp_delete_post($id, true);
        do_action('narrator_delete', $xid, 0);
        $this->assertSame(404, $client->request('GET', Narrator_Client::audio_path(1, $xid))['status']);
        update_option('narrator_settings', array_merge(Narrator_Plugin::settings(), array('signed' => false)));
    }
}
