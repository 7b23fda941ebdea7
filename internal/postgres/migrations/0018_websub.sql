-- 0018_websub: the WebSub request a feed's hub has yet to verify (its
-- mode, '' when none; its topic; when it was sent), so that only that
-- request can be verified; and each seen item's date (NULL when the feed
-- gives none), so that a replayed push of an older version changes nothing.
ALTER TABLE feed_sources ADD COLUMN websub_pending_mode text NOT NULL DEFAULT '';
ALTER TABLE feed_sources ADD COLUMN websub_pending_topic text NOT NULL DEFAULT '';
ALTER TABLE feed_sources ADD COLUMN websub_pending_at timestamptz;
ALTER TABLE feed_source_items ADD COLUMN item_updated_at timestamptz;
