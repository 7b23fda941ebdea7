-- 0001_init: the whole schema of the PostgreSQL store, as the SQLite
-- store's migrations 0001 to 0004 leave it.
--
-- Times are timestamptz (microseconds, UTC on read). NULL means "not set".
-- IDs are identity columns, always generated: a bulk load leaves them out.

CREATE TABLE accounts (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name       text        NOT NULL,
	created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id bigint      NOT NULL REFERENCES accounts (id),
	hash       bytea       NOT NULL UNIQUE, -- SHA-256 of the secret
	prefix     text        NOT NULL,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);

CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC, id DESC);

CREATE TABLE projects (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id  bigint      NOT NULL REFERENCES accounts (id),
	title       text        NOT NULL,
	type        text        NOT NULL,
	language    text        NOT NULL,
	url         text, -- NULL when not set
	title_voice text        NOT NULL,
	body_voice  text        NOT NULL,
	created_at  timestamptz NOT NULL,
	-- The number of live audios, kept by the transactions that create and
	-- delete them, so that reading a project never counts its audios.
	audio_count bigint      NOT NULL DEFAULT 0 CHECK (audio_count >= 0)
);

CREATE INDEX projects_account ON projects (account_id, id);

CREATE TABLE audios (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	project_id  bigint      NOT NULL REFERENCES projects (id),
	external_id text, -- NULL when the client gave none
	title       text        NOT NULL,
	body        text        NOT NULL,
	author      text        NOT NULL,
	article_url text        NOT NULL,
	metadata    jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'), -- strings only
	state       text        NOT NULL CHECK (state IN ('unprocessed', 'processed', 'failed')),
	error       text        NOT NULL DEFAULT '',
	revision    integer     NOT NULL DEFAULT 1,
	duration_ms bigint      NOT NULL DEFAULT 0,
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL,
	deleted_at  timestamptz, -- NULL while live
	-- The lease of the job attempt that is synthesising the audio: a second
	-- delivery of the same revision (River rescues jobs whose node died)
	-- waits while the lease is held and renewed, so that one node does the
	-- work. All three are NULL when no lease is held.
	lease_holder   text,
	lease_revision integer,
	lease_until    timestamptz
);

-- external_id is unique among a project's live audios only: it can be
-- reused once the audio holding it is deleted.
CREATE UNIQUE INDEX audios_external_id ON audios (project_id, external_id)
	WHERE deleted_at IS NULL AND external_id IS NOT NULL;

-- Listing: a project's live audios, newest first, ties broken by id. Page 1
-- is a range scan of this index, however many audios the project has.
CREATE INDEX audios_list ON audios (project_id, created_at DESC, id DESC)
	WHERE deleted_at IS NULL;

CREATE TABLE media (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	audio_id     bigint NOT NULL REFERENCES audios (id),
	content_type text   NOT NULL,
	key          text, -- NULL until published
	UNIQUE (audio_id, content_type)
);

CREATE TABLE users (
	id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id    bigint      NOT NULL REFERENCES accounts (id),
	email         text        NOT NULL UNIQUE, -- normalised: trimmed, lower-case
	password_hash bytea       NOT NULL,        -- bcrypt
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);

CREATE INDEX users_account ON users (account_id, id);

-- A session's token is only in the browser's cookie; the row keeps its
-- SHA-256 hash, so a leaked database signs nobody in.
CREATE TABLE sessions (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	hash       bytea       NOT NULL UNIQUE,
	user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	csrf_token text        NOT NULL,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);

CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

CREATE TABLE pronunciations (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	project_id bigint      NOT NULL REFERENCES projects (id),
	phrase     text        NOT NULL,
	say        text        NOT NULL,
	created_at timestamptz NOT NULL
);

-- One rule per phrase and project, whatever its letter case.
CREATE UNIQUE INDEX pronunciations_phrase ON pronunciations (project_id, lower(phrase));
