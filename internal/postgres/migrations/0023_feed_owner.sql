-- 0023_feed_owner: the podcast feed's owner (itunes:owner), whom
-- directories such as Apple Podcasts write to verify the feed; '' when
-- not set.
ALTER TABLE feeds ADD COLUMN owner_name text NOT NULL DEFAULT '';
ALTER TABLE feeds ADD COLUMN owner_email text NOT NULL DEFAULT '';
