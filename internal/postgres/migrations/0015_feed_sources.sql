-- 0015_feed_sources: the feeds rss projects narrate (not the podcast feeds
-- of 0007, which go out), and the items each read has seen.
--
-- headers and mapping are JSON objects of strings. Durations are whole
-- seconds. lease_until is set while a node reads the feed, so that one
-- node reads it at a time; NULL otherwise. hub and the websub_ columns are
-- the feed's WebSub subscription, '' and NULL when it has none.
CREATE TABLE feed_sources (
	id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	project_id     bigint NOT NULL REFERENCES projects (id),
	url            text    NOT NULL,
	headers        text    NOT NULL,
	mapping        text    NOT NULL,
	full_text      integer NOT NULL,
	backfill_items integer NOT NULL,
	backfill_since integer NOT NULL,
	poll_interval  integer NOT NULL,
	created_at     timestamptz NOT NULL,
	status         text    NOT NULL,
	last_error     text    NOT NULL,
	last_fetch_at  timestamptz,
	next_poll_at   timestamptz NOT NULL,
	failures       integer NOT NULL,
	etag           text    NOT NULL,
	last_modified  text    NOT NULL,
	items_seen     bigint NOT NULL,
	created_count  bigint NOT NULL,
	updated_count  bigint NOT NULL,
	hub            text    NOT NULL,
	websub_topic   text    NOT NULL,
	websub_secret  text    NOT NULL,
	websub_requested_at timestamptz,
	websub_expires_at   timestamptz,
	lease_until    timestamptz
);

CREATE INDEX feed_sources_project ON feed_sources (project_id, id);
CREATE INDEX feed_sources_due ON feed_sources (next_poll_at);

-- One row per item a read recorded: the external ID of its audio and the
-- hash of what the audio was made from ('-' for an item the backfill rule
-- left out, which is never narrated).
CREATE TABLE feed_source_items (
	source_id   bigint NOT NULL REFERENCES feed_sources (id) ON DELETE CASCADE,
	external_id text    NOT NULL,
	hash        text    NOT NULL,
	seen_at     timestamptz NOT NULL,
	PRIMARY KEY (source_id, external_id)
);
