-- 0015_feed_sources: the feeds rss projects narrate (not the podcast feeds
-- of 0007, which go out), and the items each read has seen.
--
-- headers and mapping are JSON objects of strings. Durations are whole
-- seconds; times UTC Unix microseconds. lease_until is set while a node
-- reads the feed, so that one node reads it at a time; NULL otherwise.
-- hub and the websub_ columns are the feed's WebSub subscription, '' and
-- NULL when it has none.
CREATE TABLE feed_sources (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	project_id     INTEGER NOT NULL REFERENCES projects (id),
	url            TEXT    NOT NULL,
	headers        TEXT    NOT NULL,
	mapping        TEXT    NOT NULL,
	full_text      INTEGER NOT NULL,
	backfill_items INTEGER NOT NULL,
	backfill_since INTEGER NOT NULL,
	poll_interval  INTEGER NOT NULL,
	created_at     INTEGER NOT NULL,
	status         TEXT    NOT NULL,
	last_error     TEXT    NOT NULL,
	last_fetch_at  INTEGER,
	next_poll_at   INTEGER NOT NULL,
	failures       INTEGER NOT NULL,
	etag           TEXT    NOT NULL,
	last_modified  TEXT    NOT NULL,
	items_seen     INTEGER NOT NULL,
	created_count  INTEGER NOT NULL,
	updated_count  INTEGER NOT NULL,
	hub            TEXT    NOT NULL,
	websub_topic   TEXT    NOT NULL,
	websub_secret  TEXT    NOT NULL,
	websub_requested_at INTEGER,
	websub_expires_at   INTEGER,
	lease_until    INTEGER
);

CREATE INDEX feed_sources_project ON feed_sources (project_id, id);
CREATE INDEX feed_sources_due ON feed_sources (next_poll_at);

-- One row per item a read recorded: the external ID of its audio and the
-- hash of what the audio was made from ('-' for an item the backfill rule
-- left out, which is never narrated).
CREATE TABLE feed_source_items (
	source_id   INTEGER NOT NULL REFERENCES feed_sources (id) ON DELETE CASCADE,
	external_id TEXT    NOT NULL,
	hash        TEXT    NOT NULL,
	seen_at     INTEGER NOT NULL,
	PRIMARY KEY (source_id, external_id)
);
