<?php

/**
 * Embed tokens and webhook signatures.
 *
 * @package Narrator
 */

use PHPUnit\Framework\TestCase;

/**
 * Tests Narrator_Signer.
 */
class SignerTest extends TestCase
{
    /** The test vector of docs/api.md, "Signed projects". */
    public function test_embed_token_matches_the_documented_vector()
    {
        $token = Narrator_Signer::embed_token(
            'nes_c2VjcmV0LWZvci10aGUtZG9jcy1vbmx5LWV4YW1wbGU',
            1,
            1798761600,
            'external_id:post-42'
        );
        $this->assertSame('1798761600.F-dAIoapjR0I8M858mHGhUU5D11qlaEXkns6bZR7FKE', $token);
    }

    public function test_embed_token_depends_on_each_part()
    {
        $secret = 'nes_c2VjcmV0LWZvci10aGUtZG9jcy1vbmx5LWV4YW1wbGU';
        $base   = Narrator_Signer::embed_token($secret, 1, 1798761600, 'external_id:post-42');
        $this->assertNotSame($base, Narrator_Signer::embed_token($secret, 2, 1798761600, 'external_id:post-42'));
        $this->assertNotSame($base, Narrator_Signer::embed_token($secret, 1, 1798761601, 'external_id:post-42'));
        $this->assertNotSame($base, Narrator_Signer::embed_token($secret, 1, 1798761600, 'external_id:post-43'));
        $this->assertNotSame($base, Narrator_Signer::embed_token($secret . 'x', 1, 1798761600, 'external_id:post-42'));
        $this->assertMatchesRegularExpression('/^1798761600\.[A-Za-z0-9_-]{43}$/', $base);
    }

    /**
     * The Standard Webhooks libraries' test vector.
     *
     * @return array
     */
    private function vector()
    {
        return array(
            'secret'    => 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
            'id'        => 'msg_p5jXN8AQM9LWM0D4loKWxJek',
            'timestamp' => '1614265330',
            'body'      => '{"test": 2432232314}',
            'signature' => 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
        );
    }

    public function test_webhook_vector_verifies()
    {
        $v = $this->vector();
        $this->assertTrue(Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], $v['signature'], $v['body'], 1614265330));
        // Several signatures, the matching one not first (key rotation).
        $multi = 'v1,Zm9vYmFy v2,abc ' . $v['signature'];
        $this->assertTrue(Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], $multi, $v['body'], 1614265330 + 299));
    }

    public function test_webhook_refusals()
    {
        $v   = $this->vector();
        $now = 1614265330;
        $this->assertIsString(Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], $v['signature'], $v['body'] . ' ', $now), 'changed body');
        $this->assertIsString(Narrator_Signer::verify_webhook($v['secret'], 'msg_other', $v['timestamp'], $v['signature'], $v['body'], $now), 'other id');
        $this->assertIsString(Narrator_Signer::verify_webhook('whsec_' . base64_encode('other'), $v['id'], $v['timestamp'], $v['signature'], $v['body'], $now), 'other secret');
        $this->assertSame('timestamp outside the tolerance', Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], $v['signature'], $v['body'], $now + 301));
        $this->assertSame('timestamp outside the tolerance', Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], $v['signature'], $v['body'], $now - 301));
        $this->assertSame('missing webhook headers', Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], '', $v['body'], $now));
        $this->assertSame('no usable secret', Narrator_Signer::verify_webhook('', $v['id'], $v['timestamp'], $v['signature'], $v['body'], $now));
        $this->assertSame('bad timestamp', Narrator_Signer::verify_webhook($v['secret'], $v['id'], '16e8', $v['signature'], $v['body'], $now));
        $this->assertIsString(Narrator_Signer::verify_webhook($v['secret'], $v['id'], $v['timestamp'], 'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', $v['body'], $now), 'other version');
    }

    /** A message signed the way Narrator's shell recipe in docs/api.md signs. */
    public function test_webhook_roundtrip_with_a_fresh_secret()
    {
        $key    = random_bytes(24);
        $secret = 'whsec_' . base64_encode($key);
        $body   = '{"action_type":"audio.processed","id":7}';
        $sig    = 'v1,' . base64_encode(hash_hmac('sha256', 'msg_1.100.' . $body, $key, true));
        $this->assertTrue(Narrator_Signer::verify_webhook($secret, 'msg_1', '100', $sig, $body, 100));
    }
}
