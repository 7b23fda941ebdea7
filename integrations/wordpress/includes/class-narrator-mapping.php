<?php

/**
 * The plugin's pure decisions: what a post becomes in Narrator, the body it
 * sends, and how a state reads in the admin.
 *
 * No WordPress function is called here except the translation functions,
 * which the tests stub, so the tests run this class without WordPress.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Maps posts to audios.
 */
class Narrator_Mapping
{
    /**
     * The external_id of a post: stable per site and post. The site key is a
     * random value kept by the site (the network on multisite), so two sites
     * of one project never collide; the blog ID tells apart the sites of a
     * network.
     *
     * @param string $site_key A short random identifier of the installation.
     * @param int    $blog_id  The blog ID (1 on a single site).
     * @param int    $post_id  The post ID.
     * @return string
     */
    public static function external_id($site_key, $blog_id, $post_id)
    {
        return 'wp-' . $site_key . '-' . (int) $blog_id . '-' . (int) $post_id;
    }

    /**
     * Parses an external_id made by external_id().
     *
     * @param string $external_id The external_id.
     * @return array|null array( site_key, blog_id, post_id ), or null.
     */
    public static function parse_external_id($external_id)
    {
        if (! preg_match('/^wp-([a-z0-9]+)-([0-9]+)-([0-9]+)$/', (string) $external_id, $m)) {
            return null;
        }
        return array($m[1], (int) $m[2], (int) $m[3]);
    }

    /**
     * The publication an audio should have for a post, following the table of
     * the issue: draft and pending posts get no audio unless the editor asked
     * for one early (then a Narrator draft); a scheduled post a scheduled
     * audio; a published one a published audio; private and
     * password-protected posts are published only in a signed project (the
     * player then needs a token this site signs for readers it lets in) and
     * kept as drafts in a public one, where anybody could play them; a
     * trashed post's audio is taken back (draft).
     *
     * @param string $status       The post status.
     * @param bool   $has_password Whether the post has a password.
     * @param bool   $signed       Whether the project's access is signed.
     * @param bool   $requested    Whether an editor asked for audio (early or in bulk).
     * @param bool   $has_audio    Whether the post already has an audio.
     * @param string $date_gmt     The post's date, "Y-m-d H:i:s" in UTC.
     * @return array|null Null for no audio; else array( 'state' => ..., 'publish_at' => ... ).
     */
    public static function publication($status, $has_password, $signed, $requested, $has_audio, $date_gmt)
    {
        $restricted = $has_password || 'private' === $status;
        switch ($status) {
            case 'publish':
            case 'private':
                if ($restricted && ! $signed) {
                    return array('state' => 'draft');
                }
                return array('state' => 'published');
            case 'future':
                if ($restricted && ! $signed) {
                    return array('state' => 'draft');
                }
                return array(
                    'state'      => 'scheduled',
                    'publish_at' => self::rfc3339($date_gmt),
                );
            case 'draft':
            case 'pending':
            case 'trash':
                if ($has_audio || ($requested && 'trash' !== $status)) {
                    return array('state' => 'draft');
                }
                return null;
            default: // auto-draft, inherit, unknown statuses.
                return $has_audio ? array('state' => 'draft') : null;
        }
    }

    /**
     * A "Y-m-d H:i:s" UTC time as RFC 3339.
     *
     * @param string $date_gmt The time.
     * @return string
     */
    public static function rfc3339($date_gmt)
    {
        $t = strtotime($date_gmt . ' UTC');
        return gmdate('Y-m-d\TH:i:s\Z', false === $t ? 0 : $t);
    }

    /**
     * The create body sent to POST /api/v3/projects/{id}/audio.
     *
     * @param array $post array( external_id, title, author, url, html, post_id ), and image:
     *                    the featured image's URL, sent as metadata.image_url (the podcast
     *                    item's image and the player's lock-screen artwork).
     * @return array
     */
    public static function audio_body(array $post)
    {
        $body = array(
            'external_id' => (string) $post['external_id'],
            'title'       => self::plain($post['title'], 1000),
            'body'        => self::clean_body($post['html']),
            'metadata'    => array(
                'source'  => 'wordpress',
                'post_id' => (string) (int) $post['post_id'],
            ),
        );
        $author = self::plain(isset($post['author']) ? $post['author'] : '', 500);
        if ('' !== $author) {
            $body['author'] = $author;
        }
        if (self::absolute_url(isset($post['url']) ? $post['url'] : '')) {
            $body['article_url'] = (string) $post['url'];
        }
        if (self::absolute_url(isset($post['image']) ? $post['image'] : '')) {
            $body['metadata']['image_url'] = (string) $post['image'];
        }
        return $body;
    }

    /**
     * Whether a URL is one Narrator takes as article_url or image_url: an
     * absolute http or https URL of at most 2,048 characters.
     *
     * @param mixed $url The URL.
     * @return bool
     */
    public static function absolute_url($url)
    {
        return is_string($url) && strlen($url) <= 2048
            && (bool) preg_match('#^https?://[^\s\x00-\x1f\x7f/?\#]+[^\s\x00-\x1f\x7f]*$#i', $url)
            && ! preg_match('/%(?![0-9a-f]{2})/i', $url); // Narrator refuses what Go's url.Parse does.
    }

    /**
     * The hash of what is sent again when it changes: what makes speech
     * (title, body, author) and the image, which Narrator updates without
     * a new synthesis.
     *
     * @param array $body An audio_body().
     * @return string
     */
    public static function content_hash(array $body)
    {
        $author = isset($body['author']) ? $body['author'] : '';
        $image  = isset($body['metadata']['image_url']) ? "\0" . $body['metadata']['image_url'] : '';
        return hash('sha256', $body['title'] . "\0" . $body['body'] . "\0" . $author . $image);
    }

    /**
     * Plain text from a title or name: tags removed, entities decoded,
     * white space collapsed, cut to $max characters.
     *
     * @param string $text The text.
     * @param int    $max  Most characters kept.
     * @return string
     */
    public static function plain($text, $max)
    {
        $text = html_entity_decode(strip_tags((string) $text), ENT_QUOTES | ENT_HTML5, 'UTF-8');
        $text = trim(preg_replace('/\s+/u', ' ', $text));
        if (function_exists('mb_substr')) {
            return mb_substr($text, 0, $max, 'UTF-8');
        }
        return substr($text, 0, $max);
    }

    /**
     * The rendered post body as sent: scripts, styles, embeds, forms, the
     * plugin's own player and shortcodes left in the text are removed.
     * Narrator reads HTML, so the rest of the markup stays.
     *
     * @param string $html The post content after the_content's filters.
     * @return string
     */
    public static function clean_body($html)
    {
        $html = (string) $html;
        // Elements whose content is never read.
        foreach (array('script', 'style', 'noscript', 'iframe', 'object', 'form', 'template', 'svg', 'video', 'audio') as $tag) {
            $html = preg_replace('#<' . $tag . '\b[^>]*>.*?</' . $tag . '\s*>#is', '', $html);
            $html = preg_replace('#<' . $tag . '\b[^>]*/?>#i', '', $html);
        }
        // The plugin's own player.
        $html = preg_replace('#<div\b[^>]*\bclass="[^"]*\bnarrator-player\b[^"]*"[^>]*>.*?</div>#is', '', $html);
        // Shortcodes that no plugin rendered: [name ...], [/name].
        $html = preg_replace('#\[/?[a-zA-Z][\w-]*(?:\s[^\]]*)?\]#', '', $html);
        $html = preg_replace('/<!--.*?-->/s', '', $html);
        $html = preg_replace("/\n{3,}/", "\n\n", $html);
        return trim($html);
    }

    /**
     * The duration of an audio or event's MP3, in seconds, or null.
     *
     * @param array $audio An Audio or AudioEvent as decoded JSON.
     * @return float|null
     */
    public static function duration(array $audio)
    {
        if (empty($audio['media']) || ! is_array($audio['media'])) {
            return null;
        }
        foreach ($audio['media'] as $m) {
            if (isset($m['content_type'], $m['duration']) && 'mp3' === $m['content_type']) {
                return (float) $m['duration'];
            }
        }
        return null;
    }

    /**
     * The label of a post's audio state in the posts list and meta box.
     * States: queued (waiting to be sent), retrying (Narrator could not be
     * reached), unprocessed, processed and failed (Narrator's), none.
     *
     * @param string     $state    The stored state.
     * @param float|null $duration Seconds, for processed audios.
     * @return string
     */
    public static function label($state, $duration = null)
    {
        switch ($state) {
            case 'queued':
                return __('Queued', 'narrator');
            case 'retrying':
                return __('Waiting for Narrator (retrying)', 'narrator');
            case 'unprocessed':
                return __('Processing', 'narrator');
            case 'processed':
                if (null === $duration || '' === $duration) {
                    return __('Processed', 'narrator');
                }
                /* translators: %s: the audio's duration, as 3:05. */
                return sprintf(__('Processed (%s)', 'narrator'), self::clock($duration));
            case 'failed':
                return __('Failed', 'narrator');
            default:
                return __('No audio', 'narrator');
        }
    }

    /**
     * Seconds as m:ss or h:mm:ss.
     *
     * @param float $seconds The duration.
     * @return string
     */
    public static function clock($seconds)
    {
        $s = (int) round((float) $seconds);
        if ($s >= 3600) {
            return sprintf('%d:%02d:%02d', intdiv($s, 3600), intdiv($s % 3600, 60), $s % 60);
        }
        return sprintf('%d:%02d', intdiv($s, 60), $s % 60);
    }

    /**
     * Seconds before the next attempt after $attempts failed ones:
     * 30 s doubling, at most an hour.
     *
     * @param int $attempts Failed attempts so far (1 after the first).
     * @return int
     */
    public static function backoff($attempts)
    {
        $attempts = max(1, (int) $attempts);
        return (int) min(3600, 30 * (2 ** min(12, $attempts - 1)));
    }

    /**
     * Names what is wrong with a connection, from what the request gave.
     *
     * @param string|null $transport_error The HTTP library's error, or null.
     * @param int         $status          The HTTP status (0 without an answer).
     * @param bool        $is_json         Whether the answer was JSON.
     * @return array|null array( 'url'|'tls'|'key'|'server', message ), or null when fine.
     */
    public static function connection_problem($transport_error, $status, $is_json)
    {
        if (null !== $transport_error && '' !== $transport_error) {
            if (preg_match('/SSL|TLS|certificate|cURL error (35|51|53|54|58|59|60|64|66|77|80|82|83|90|91)\b/i', $transport_error)) {
                /* translators: %s: the error of the HTTP library. */
                return array('tls', sprintf(__('TLS: the server\'s certificate or TLS handshake was refused (%s).', 'narrator'), $transport_error));
            }
            /* translators: %s: the error of the HTTP library. */
            return array('url', sprintf(__('URL: the server could not be reached (%s).', 'narrator'), $transport_error));
        }
        if (401 === (int) $status) {
            return array('key', __('API key: Narrator does not recognise it (revoked or mistyped).', 'narrator'));
        }
        if (! $is_json || 404 === (int) $status) {
            /* translators: %d: an HTTP status. */
            return array('url', sprintf(__('URL: this address answered HTTP %d but is not a Narrator server.', 'narrator'), (int) $status));
        }
        if ((int) $status >= 300) {
            /* translators: %d: an HTTP status. */
            return array('server', sprintf(__('Server: Narrator answered HTTP %d; try again later.', 'narrator'), (int) $status));
        }
        return null;
    }
}
