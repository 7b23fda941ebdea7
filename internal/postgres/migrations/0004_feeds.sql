-- 0004_feeds: media sizes and podcast feeds.
--
-- media.bytes is the size of the object at key, recorded when it is
-- published: a podcast feed's enclosure length. Media published before
-- this migration keep 0 until their audio is synthesised again.
ALTER TABLE media ADD COLUMN bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0);
