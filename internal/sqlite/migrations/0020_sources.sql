-- 0020_sources: what Narrator reads is a source, and "feed" is only the
-- podcast feed it publishes (table feeds), so feed_sources is sources and
-- feed_source_items is source_items, with their indexes. SQLite updates the
-- references to a renamed table; an index can only be made again.
ALTER TABLE feed_sources RENAME TO sources;
ALTER TABLE feed_source_items RENAME TO source_items;
DROP INDEX feed_sources_project;
DROP INDEX feed_sources_due;
CREATE INDEX sources_project ON sources (project_id, id);
CREATE INDEX sources_due ON sources (next_poll_at);
