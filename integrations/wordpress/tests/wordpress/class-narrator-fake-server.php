<?php

/**
 * A fake Narrator behind WordPress's HTTP API (pre_http_request), answering
 * the shapes of internal/openapi/openapi.json, and recording every request.
 *
 * @package Narrator
 */

/**
 * A small in-memory Narrator.
 */
class Narrator_Fake_Server
{
    /** @var array Requests: array( method, path, body, headers ). */
    public $requests = array();

    /** @var array Audios by external_id. */
    public $audios = array();

    /** @var array Publications by external_id. */
    public $publications = array();

    /** @var array Webhook endpoints. */
    public $webhooks = array();

    /** @var array The project's access. */
    public $access = array('project_id' => 1, 'mode' => 'public', 'allowed_origins' => array(), 'draft_new_audios' => false, 'has_signing_secret' => false, 'updated_at' => null);

    /** @var string|null A transport error every request gets (Narrator down). */
    public $down = null;

    /** @var string The key it accepts. */
    public $key = 'nk_test';

    /** @var int */
    private $next = 1;

    /**
     * Starts answering.
     */
    public function start()
    {
        add_filter('pre_http_request', array($this, 'answer'), 10, 3);
    }

    /**
     * Stops answering.
     */
    public function stop()
    {
        remove_filter('pre_http_request', array($this, 'answer'), 10);
    }

    /**
     * Answers a request to https://narrator.test.
     *
     * @param mixed  $pre  The short-circuit so far.
     * @param array  $args The request.
     * @param string $url  The URL.
     * @return mixed
     */
    public function answer($pre, $args, $url)
    {
        if (0 !== strpos($url, 'https://narrator.test/')) {
            return $pre;
        }
        $path             = (string) wp_parse_url($url, PHP_URL_PATH);
        $body             = isset($args['body']) && '' !== $args['body'] ? json_decode($args['body'], true) : null;
        $this->requests[] = array($args['method'], $path, $body, $args['headers']);
        if (null !== $this->down) {
            return new WP_Error('http_request_failed', $this->down);
        }
        if ('Bearer ' . $this->key !== $args['headers']['Authorization']) {
            return $this->json(401, array('code' => 20, 'message' => 'The authentication token was not recognised'));
        }
        $m = $args['method'];
        if ('GET' === $m && '/api/v3/projects' === $path) {
            return $this->json(200, array(array('id' => 1, 'title' => 'News', 'type' => 'api', 'language' => 'en_US', 'url' => null, 'title_voice' => 'Slt (Female)', 'body_voice' => 'Slt (Female)', 'audio_count' => count($this->audios))));
        }
        if (! preg_match('#^/api/v3/projects/1(/.*)?$#', $path, $mm)) {
            return $this->json(404, array('code' => 30, 'message' => 'Object not found'));
        }
        $rest = isset($mm[1]) ? $mm[1] : '';
        if ('POST' === $m && '/audio' === $rest) {
            $xid = $body['external_id'];
            if (isset($this->audios[$xid])) {
                $this->audios[$xid] = array_merge($this->audios[$xid], $body, array('state' => 'unprocessed'));
            } else {
                $this->audios[$xid]       = array_merge($body, array('id' => $this->next++, 'state' => 'unprocessed'));
                $this->publications[$xid] = $this->access['draft_new_audios'] ? array('state' => 'draft') : array('state' => 'published');
            }
            return $this->json(200, $this->audio($xid));
        }
        if (preg_match('#^/audio/([^/]+)(/publication)?$#', $rest, $a)) {
            $xid = rawurldecode($a[1]);
            if (! isset($this->audios[$xid])) {
                return $this->json(404, array('code' => 30, 'message' => 'Object not found'));
            }
            if (! empty($a[2]) && 'PUT' === $m) {
                $this->publications[$xid] = array_intersect_key($body, array('state' => 1, 'publish_at' => 1));
                return $this->json(200, array('audio_id' => $this->audios[$xid]['id'], 'state' => $body['state'], 'publish_at' => isset($body['publish_at']) ? $body['publish_at'] : null, 'public' => 'published' === $body['state'], 'updated_at' => gmdate('c')));
            }
            if ('DELETE' === $m) {
                $out = $this->audio($xid);
                unset($this->audios[$xid], $this->publications[$xid]);
                return $this->json(200, array_merge($out, array('deleted' => true)));
            }
            return $this->json(200, $this->audio($xid));
        }
        if ('PUT' === $m && '/access' === $rest) {
            $this->access = array_merge($this->access, $body);
            return $this->json(200, $this->access);
        }
        if ('POST' === $m && '/access/rotate-secret' === $rest) {
            $this->access['has_signing_secret'] = true;
            return $this->json(200, array_merge($this->access, array('signing_secret' => 'nes_c2VjcmV0LWZvci10aGUtZG9jcy1vbmx5LWV4YW1wbGU')));
        }
        if ('/webhooks' === $rest) {
            if ('GET' === $m) {
                return $this->json(200, array_values($this->webhooks));
            }
            $id                  = count($this->webhooks) + 1;
            $this->webhooks[$id] = array('id' => $id, 'project_id' => 1, 'url' => $body['url'], 'events' => $body['events'], 'enabled' => true, 'disabled_at' => null, 'failing_since' => null, 'created_at' => gmdate('c'));
            return $this->json(201, array_merge($this->webhooks[$id], array('secret' => 'whsec_' . base64_encode('webhook-secret-of-the-tests'))));
        }
        return $this->json(404, array('code' => 30, 'message' => 'Object not found'));
    }

    /**
     * An audio as v3 answers it.
     *
     * @param string $xid The external_id.
     * @return array
     */
    public function audio($xid)
    {
        $a = $this->audios[$xid];
        return array(
            'id'          => $a['id'],
            'external_id' => $xid,
            'state'       => $a['state'],
            'media'       => array(array('id' => 1, 'content_type' => 'mp3', 'url' => array()), array('id' => 2, 'content_type' => 'm3u8', 'url' => array())),
            'deleted'     => false,
            'metadata'    => isset($a['metadata']) ? $a['metadata'] : new stdClass(),
        );
    }

    /**
     * The requests made, as "METHOD path".
     *
     * @return string[]
     */
    public function calls()
    {
        return array_map(
            function ($r) {
                return $r[0] . ' ' . $r[1];
            },
            $this->requests
        );
    }

    /**
     * A JSON answer.
     *
     * @param int   $status The status.
     * @param mixed $body   The body.
     * @return array
     */
    private function json($status, $body)
    {
        return array(
            'headers'  => array('content-type' => 'application/json'),
            'body'     => wp_json_encode($body),
            'response' => array('code' => $status, 'message' => ''),
            'cookies'  => array(),
            'filename' => null,
        );
    }
}
