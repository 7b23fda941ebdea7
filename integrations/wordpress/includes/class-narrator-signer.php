<?php

/**
 * Tokens for signed projects and Standard Webhooks signatures.
 *
 * Pure PHP: no WordPress function is called here, so the tests run it alone.
 *
 * @package Narrator
 */

defined('ABSPATH') || exit;

/**
 * Signs embed tokens and verifies webhook signatures.
 */
class Narrator_Signer
{
    /**
     * The embed token of docs/api.md "Signed projects":
     * HMAC-SHA256 of "v1.{project}.{expires}.{subject}" keyed with the
     * secret as written, in unpadded URL-safe base64, as "{expires}.{sig}".
     *
     * @param string $secret     The project's signing secret (nes_...).
     * @param int    $project_id The project.
     * @param int    $expires    Unix time after which the token is refused.
     * @param string $subject    "external_id:ID", "url:URL" or "media:FOLDER".
     * @return string The token.
     */
    public static function embed_token($secret, $project_id, $expires, $subject)
    {
        $message = 'v1.' . (int) $project_id . '.' . (int) $expires . '.' . $subject;
        $mac     = hash_hmac('sha256', $message, (string) $secret, true);
        return (int) $expires . '.' . self::base64url($mac);
    }

    /**
     * Unpadded URL-safe base64 (RFC 4648 section 5).
     *
     * @param string $bytes Raw bytes.
     * @return string
     */
    public static function base64url($bytes)
    {
        return rtrim(strtr(base64_encode($bytes), '+/', '-_'), '=');
    }

    /**
     * Verifies a Standard Webhooks message.
     *
     * @param string $secret    The endpoint's secret, "whsec_" and base64.
     * @param string $id        The webhook-id header.
     * @param string $timestamp The webhook-timestamp header (Unix seconds).
     * @param string $signature The webhook-signature header: space-separated "v1,BASE64".
     * @param string $body      The raw request body.
     * @param int    $now       The current Unix time.
     * @param int    $tolerance Seconds the timestamp may be off either way.
     * @return true|string True, or why the message is refused.
     */
    public static function verify_webhook($secret, $id, $timestamp, $signature, $body, $now, $tolerance = 300)
    {
        if ('' === (string) $id || '' === (string) $timestamp || '' === (string) $signature) {
            return 'missing webhook headers';
        }
        if (! preg_match('/^[0-9]{1,12}$/', (string) $timestamp)) {
            return 'bad timestamp';
        }
        if (abs((int) $now - (int) $timestamp) > $tolerance) {
            return 'timestamp outside the tolerance';
        }
        $secret = (string) $secret;
        if (0 === strpos($secret, 'whsec_')) {
            $secret = substr($secret, 6);
        }
        $key = base64_decode($secret, true);
        if (false === $key || '' === $key) {
            return 'no usable secret';
        }
        $expected = base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $body, $key, true));
        foreach (preg_split('/\s+/', trim((string) $signature)) as $candidate) {
            $parts = explode(',', $candidate, 2);
            if (2 === count($parts) && 'v1' === $parts[0] && hash_equals($expected, $parts[1])) {
                return true;
            }
        }
        return 'no signature matches';
    }
}
