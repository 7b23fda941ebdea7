-- 0001_init: accounts, API keys, projects, audios and their media.
--
-- Every timestamp column holds UTC Unix time in microseconds (INTEGER), so
-- that ordering by the column orders by time. NULL means "not set".

CREATE TABLE accounts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	account_id INTEGER NOT NULL REFERENCES accounts (id),
	hash       BLOB    NOT NULL UNIQUE, -- SHA-256 of the secret
	prefix     TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);

CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC, id DESC);

CREATE TABLE projects (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	account_id  INTEGER NOT NULL REFERENCES accounts (id),
	title       TEXT    NOT NULL,
	type        TEXT    NOT NULL,
	language    TEXT    NOT NULL,
	url         TEXT, -- NULL when not set
	title_voice TEXT    NOT NULL,
	body_voice  TEXT    NOT NULL,
	created_at  INTEGER NOT NULL
);

CREATE INDEX projects_account ON projects (account_id, id);

CREATE TABLE audios (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	project_id  INTEGER NOT NULL REFERENCES projects (id),
	external_id TEXT, -- NULL when the client gave none
	title       TEXT    NOT NULL,
	body        TEXT    NOT NULL,
	author      TEXT    NOT NULL,
	article_url TEXT    NOT NULL,
	metadata    TEXT    NOT NULL DEFAULT '{}', -- JSON object of strings
	state       TEXT    NOT NULL CHECK (state IN ('unprocessed', 'processed', 'failed')),
	error       TEXT    NOT NULL DEFAULT '',
	revision    INTEGER NOT NULL DEFAULT 1,
	duration_ms INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	deleted_at  INTEGER -- NULL while live
);

-- external_id is unique among a project's live audios only: it can be
-- reused once the audio holding it is deleted.
CREATE UNIQUE INDEX audios_external_id ON audios (project_id, external_id)
	WHERE deleted_at IS NULL AND external_id IS NOT NULL;

-- Listing: a project's live audios, newest first, ties broken by id.
CREATE INDEX audios_list ON audios (project_id, deleted_at, created_at DESC, id DESC);

-- Start-up scan for audios still waiting for speech.
CREATE INDEX audios_unprocessed ON audios (id)
	WHERE deleted_at IS NULL AND state = 'unprocessed';

CREATE TABLE media (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	audio_id     INTEGER NOT NULL REFERENCES audios (id),
	content_type TEXT    NOT NULL,
	key          TEXT, -- NULL until published
	UNIQUE (audio_id, content_type)
);
