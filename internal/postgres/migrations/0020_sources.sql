-- 0020_sources: what Narrator reads is a source, and "feed" is only the
-- podcast feed it publishes (table feeds), so feed_sources is sources and
-- feed_source_items is source_items, with their indexes, keys and sequence.
ALTER TABLE feed_sources RENAME TO sources;
ALTER TABLE feed_source_items RENAME TO source_items;
ALTER INDEX feed_sources_project RENAME TO sources_project;
ALTER INDEX feed_sources_due RENAME TO sources_due;
ALTER INDEX feed_sources_pkey RENAME TO sources_pkey;
ALTER INDEX feed_source_items_pkey RENAME TO source_items_pkey;
ALTER SEQUENCE feed_sources_id_seq RENAME TO sources_id_seq;
ALTER TABLE sources RENAME CONSTRAINT feed_sources_project_id_fkey TO sources_project_id_fkey;
ALTER TABLE source_items RENAME CONSTRAINT feed_source_items_source_id_fkey TO source_items_source_id_fkey;
