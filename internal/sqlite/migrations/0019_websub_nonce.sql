-- 0019_websub_nonce: the random last segment of a feed's WebSub callback
-- URL, sent to the hub with the secret, so that only the hub can verify,
-- deny or push; '' for a subscription made before it, which the next read
-- makes again.
ALTER TABLE feed_sources ADD COLUMN websub_nonce TEXT NOT NULL DEFAULT '';
