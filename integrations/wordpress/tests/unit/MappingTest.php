<?php

/**
 * What a post becomes in Narrator.
 *
 * @package Narrator
 */

use PHPUnit\Framework\TestCase;

/**
 * Tests Narrator_Mapping.
 */
class MappingTest extends TestCase
{
    /**
     * The table of issue 34, for a public and a signed project.
     *
     * @return array
     */
    public function publication_cases()
    {
        $at = '2030-01-02 03:04:05';
        return array(
            // status, password, signed, requested, has audio => expected.
            'draft'                       => array('draft', false, false, false, false, null),
            'pending'                     => array('pending', false, false, false, false, null),
            'draft generated early'       => array('draft', false, false, true, false, array('state' => 'draft')),
            'published post back to draft' => array('draft', false, false, false, true, array('state' => 'draft')),
            'scheduled'                   => array('future', false, false, false, false, array('state' => 'scheduled', 'publish_at' => '2030-01-02T03:04:05Z')),
            'published'                   => array('publish', false, false, false, false, array('state' => 'published')),
            'private, signed project'     => array('private', false, true, false, false, array('state' => 'published')),
            'private, public project'     => array('private', false, false, false, false, array('state' => 'draft')),
            'password, signed project'    => array('publish', true, true, false, false, array('state' => 'published')),
            'password, public project'    => array('publish', true, false, false, true, array('state' => 'draft')),
            'scheduled with password, public' => array('future', true, false, false, false, array('state' => 'draft')),
            'scheduled with password, signed' => array('future', true, true, false, false, array('state' => 'scheduled', 'publish_at' => '2030-01-02T03:04:05Z')),
            'trashed with audio'          => array('trash', false, false, false, true, array('state' => 'draft')),
            'trashed without audio'       => array('trash', false, false, true, false, null),
            'auto-draft'                  => array('auto-draft', false, false, true, false, null),
        );
    }

    /**
     * @dataProvider publication_cases
     */
    public function test_publication_follows_the_post($status, $password, $signed, $requested, $has_audio, $expected)
    {
        $this->assertSame($expected, Narrator_Mapping::publication($status, $password, $signed, $requested, $has_audio, '2030-01-02 03:04:05'));
    }

    public function test_external_id_is_stable_and_parses_back()
    {
        $id = Narrator_Mapping::external_id('ab12cd34', 3, 42);
        $this->assertSame('wp-ab12cd34-3-42', $id);
        $this->assertSame($id, Narrator_Mapping::external_id('ab12cd34', 3, 42));
        $this->assertNotSame($id, Narrator_Mapping::external_id('ab12cd34', 1, 42), 'another blog of the network');
        $this->assertSame(array('ab12cd34', 3, 42), Narrator_Mapping::parse_external_id($id));
        $this->assertNull(Narrator_Mapping::parse_external_id('post-42'));
        $this->assertNull(Narrator_Mapping::parse_external_id('wp-ab12cd34-3-42 '));
    }

    public function test_the_body_it_sends()
    {
        $html = "<p>First &amp; <em>foremost</em>.</p>\n"
            . '<div class="narrator-player"><script src="https://a.example/embed.js" data-project="1" async></script></div>'
            . "\n<p>[gallery ids=\"1,2\"] Second.[/caption]</p>\n"
            . "<script>alert(1)</script><style>p{}</style>\n<!-- wp:paragraph -->\n"
            . '<iframe src="https://video.example/"></iframe><h2>Heading</h2>';
        $body = Narrator_Mapping::audio_body(
            array(
                'external_id' => 'wp-ab12cd34-1-42',
                'post_id'     => 42,
                'title'       => 'Caf&eacute; &#8220;news&#8221; <b>today</b>',
                'author'      => '  Ada   Lovelace ',
                'url'         => 'https://news.example/2030/01/cafe/',
                'html'        => $html,
                'image'       => 'https://news.example/wp-content/uploads/2030/01/cafe.jpg',
            )
        );
        $this->assertSame(
            array(
                'external_id' => 'wp-ab12cd34-1-42',
                'title'       => "Café \u{201C}news\u{201D} today",
                'body'        => "<p>First &amp; <em>foremost</em>.</p>\n\n<p> Second.</p>\n\n<h2>Heading</h2>",
                'metadata'    => array('source' => 'wordpress', 'post_id' => '42', 'image_url' => 'https://news.example/wp-content/uploads/2030/01/cafe.jpg'),
                'author'      => 'Ada Lovelace',
                'article_url' => 'https://news.example/2030/01/cafe/',
            ),
            $body
        );
        $this->assertSame(
            array('source' => 'wordpress', 'post_id' => '42'),
            Narrator_Mapping::audio_body(array('external_id' => 'x', 'post_id' => 42, 'title' => 't', 'author' => '', 'url' => 'javascript:x', 'html' => 'b'))['metadata']
        );
        $no_extras = Narrator_Mapping::audio_body(array('external_id' => 'x', 'post_id' => 1, 'title' => 't', 'author' => '', 'url' => 'javascript:x', 'html' => 'b', 'image' => false));
        $this->assertArrayNotHasKey('author', $no_extras);
        $this->assertArrayNotHasKey('article_url', $no_extras);
        $this->assertArrayNotHasKey('image_url', $no_extras['metadata']);
        foreach (array('https://x.example/a b.jpg', 'https:///a.jpg', 'https://x.example/100%.jpg', 'data:image/png;base64,AA', 'https://x.example/' . str_repeat('a', 2048)) as $bad) {
            $this->assertFalse(Narrator_Mapping::absolute_url($bad), $bad);
        }
        $this->assertTrue(Narrator_Mapping::absolute_url('http://x.example:8080/a%20b.jpg?w=1#c'));
    }

    public function test_the_hash_changes_with_title_text_author_or_image_only()
    {
        $a = array('title' => 'T', 'body' => 'B', 'author' => 'A', 'article_url' => 'https://x.example/1');
        $h = Narrator_Mapping::content_hash($a);
        $this->assertSame($h, Narrator_Mapping::content_hash(array_merge($a, array('article_url' => 'https://x.example/2'))));
        $this->assertNotSame($h, Narrator_Mapping::content_hash(array_merge($a, array('title' => 'T2'))));
        $this->assertNotSame($h, Narrator_Mapping::content_hash(array_merge($a, array('body' => 'B2'))));
        $this->assertNotSame($h, Narrator_Mapping::content_hash(array_merge($a, array('author' => 'A2'))));
        $with_image = array_merge($a, array('metadata' => array('image_url' => 'https://x.example/1.jpg')));
        $this->assertNotSame($h, Narrator_Mapping::content_hash($with_image), 'a new featured image is sent (Narrator does not resynthesize for it)');
        $this->assertSame($h, Narrator_Mapping::content_hash(array_merge($a, array('metadata' => array('post_id' => '1')))), 'no image: the hash of earlier versions');
    }

    public function test_state_labels()
    {
        $this->assertSame('Processing', Narrator_Mapping::label('unprocessed'));
        $this->assertSame('Processed (3:05)', Narrator_Mapping::label('processed', 185.2));
        $this->assertSame('Processed (1:01:01)', Narrator_Mapping::label('processed', '3661'));
        $this->assertSame('Processed', Narrator_Mapping::label('processed', ''));
        $this->assertSame('Failed', Narrator_Mapping::label('failed'));
        $this->assertSame('Queued', Narrator_Mapping::label('queued'));
        $this->assertSame('Waiting for Narrator (retrying)', Narrator_Mapping::label('retrying'));
        $this->assertSame('No audio', Narrator_Mapping::label(''));
    }

    public function test_duration_comes_from_the_mp3()
    {
        $event = array('media' => array(
            array('id' => 2, 'content_type' => 'm3u8', 'url' => 'https://x/a.m3u8', 'duration' => 9.5),
            array('id' => 1, 'content_type' => 'mp3', 'url' => 'https://x/a.mp3', 'duration' => 9.53),
        ));
        $this->assertSame(9.53, Narrator_Mapping::duration($event));
        $this->assertNull(Narrator_Mapping::duration(array('media' => array())));
    }

    public function test_backoff_doubles_up_to_an_hour()
    {
        $this->assertSame(30, Narrator_Mapping::backoff(1));
        $this->assertSame(60, Narrator_Mapping::backoff(2));
        $this->assertSame(120, Narrator_Mapping::backoff(3));
        $this->assertSame(3600, Narrator_Mapping::backoff(9));
        $this->assertSame(3600, Narrator_Mapping::backoff(100));
    }

    public function test_connection_problems_are_named()
    {
        $this->assertSame('tls', Narrator_Mapping::connection_problem('cURL error 60: SSL certificate problem: self-signed certificate', 0, false)[0]);
        $this->assertSame('tls', Narrator_Mapping::connection_problem('cURL error 35: OpenSSL SSL_connect: SSL_ERROR_SYSCALL', 0, false)[0]);
        $this->assertSame('url', Narrator_Mapping::connection_problem('cURL error 6: Could not resolve host: nowhere.invalid', 0, false)[0]);
        $this->assertSame('url', Narrator_Mapping::connection_problem('cURL error 7: Failed to connect', 0, false)[0]);
        $this->assertSame('key', Narrator_Mapping::connection_problem(null, 401, true)[0]);
        $this->assertSame('url', Narrator_Mapping::connection_problem(null, 200, false)[0], 'an HTML page');
        $this->assertSame('url', Narrator_Mapping::connection_problem(null, 404, true)[0]);
        $this->assertSame('server', Narrator_Mapping::connection_problem(null, 503, true)[0]);
        $this->assertNull(Narrator_Mapping::connection_problem(null, 200, true));
    }
}
