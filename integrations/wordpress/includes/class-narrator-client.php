<?php

/**
 * The Narrator API, through WordPress's HTTP API.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * A small client of the v3 API and the extensions the plugin uses.
 */
class Narrator_Client
{
    /** @var string */
    private $base;

    /** @var string */
    private $key;

    /**
     * @param string $base The server's URL.
     * @param string $key  The API key.
     */
    public function __construct($base, $key)
    {
        $this->base = untrailingslashit((string) $base);
        $this->key  = (string) $key;
    }

    /**
     * A client from the stored settings.
     *
     * @return Narrator_Client
     */
    public static function from_settings()
    {
        $s = Narrator_Plugin::settings();
        return new self($s['url'], get_option('narrator_api_key', ''));
    }

    /**
     * Sends a request. The key goes in Authorization, never in a URL.
     *
     * @param string     $method HTTP method.
     * @param string     $path   Path from the server's root, starting with /.
     * @param array|null $body   JSON body.
     * @param int        $timeout Seconds.
     * @return array array( 'status' => int, 'json' => mixed, 'error' => string|null, 'retry_after' => int ).
     */
    public function request($method, $path, $body = null, $timeout = 15)
    {
        $args = array(
            'method'      => $method,
            'timeout'     => $timeout,
            'redirection' => 0,
            'headers'     => array(
                'Authorization' => 'Bearer ' . $this->key,
                'Accept'        => 'application/json',
                'User-Agent'    => 'Narrator-WordPress/' . NARRATOR_VERSION . '; ' . home_url('/'),
            ),
        );
        if (null !== $body) {
            $args['headers']['Content-Type'] = 'application/json';
            $args['body']                    = wp_json_encode($body);
        }
        $response = wp_remote_request($this->base . $path, $args);
        if (is_wp_error($response)) {
            return array('status' => 0, 'json' => null, 'error' => $response->get_error_message(), 'retry_after' => 0);
        }
        $status = (int) wp_remote_retrieve_response_code($response);
        $raw    = wp_remote_retrieve_body($response);
        $json   = json_decode($raw, true);
        $type   = (string) wp_remote_retrieve_header($response, 'content-type');
        $result = array(
            'status'      => $status,
            'json'        => (null === $json && 'null' !== trim($raw)) ? null : $json,
            'is_json'     => false !== stripos($type, 'json') && null !== $json,
            'error'       => null,
            'retry_after' => (int) wp_remote_retrieve_header($response, 'retry-after'),
        );
        if ($status < 200 || $status >= 300) {
            $message         = is_array($json) && isset($json['message']) ? (string) $json['message'] : '';
            $result['error'] = sprintf('HTTP %d%s', $status, '' !== $message ? ': ' . $message : '');
        }
        return $result;
    }

    /**
     * The path of a project's resource.
     *
     * @param int    $project_id The project.
     * @param string $rest       What follows, starting with / or empty.
     * @return string
     */
    public static function project_path($project_id, $rest = '')
    {
        return '/api/v3/projects/' . (int) $project_id . $rest;
    }

    /**
     * The path of an audio's resource, by external_id.
     *
     * @param int    $project_id  The project.
     * @param string $external_id The audio's external_id.
     * @param string $rest        What follows.
     * @return string
     */
    public static function audio_path($project_id, $external_id, $rest = '')
    {
        return self::project_path($project_id, '/audio/' . rawurlencode($external_id) . $rest);
    }

    /**
     * Checks the URL, the key and the project, naming what is wrong.
     *
     * @param int $project_id The chosen project, or 0.
     * @return array array( 'ok' => bool, 'message' => string, 'projects' => array ).
     */
    public function test_connection($project_id)
    {
        if (! preg_match('#^https?://[^/\s]+#i', $this->base)) {
            return array('ok' => false, 'message' => __('URL: enter the Narrator server\'s address, starting with https:// or http://.', 'narrator'), 'projects' => array());
        }
        if ('' === $this->key) {
            return array('ok' => false, 'message' => __('API key: none is stored yet.', 'narrator'), 'projects' => array());
        }
        $r       = $this->request('GET', '/api/v3/projects');
        $problem = Narrator_Mapping::connection_problem($r['error'] && 0 === $r['status'] ? $r['error'] : null, $r['status'], ! empty($r['is_json']));
        if (null === $problem && ! is_array($r['json'])) {
            $problem = array('url', __('URL: the answer was not a list of projects; is this a Narrator server?', 'narrator'));
        }
        if (null !== $problem) {
            return array('ok' => false, 'message' => $problem[1], 'projects' => array());
        }
        $projects = $r['json'];
        if ($project_id <= 0) {
            return array('ok' => false, 'message' => __('Project: choose one of the key\'s projects and save.', 'narrator'), 'projects' => $projects);
        }
        foreach ($projects as $p) {
            if (isset($p['id']) && (int) $p['id'] === (int) $project_id) {
                /* translators: 1: project title, 2: project id. */
                $message = sprintf(__('Connected: project "%1$s" (%2$d).', 'narrator'), $p['title'], $p['id']);
                return array('ok' => true, 'message' => $message, 'projects' => $projects);
            }
        }
        /* translators: %d: a project id. */
        return array('ok' => false, 'message' => sprintf(__('Project: the key has no project %d.', 'narrator'), $project_id), 'projects' => $projects);
    }
}
