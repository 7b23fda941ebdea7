-- 0012_voices: the neural voices the operator installed. Their files live
-- in the media store under voices/SHA256; these rows are the catalog
-- entries every node reads. The migration has the same number in every
-- dialect (this dialect has no 0009 to 0011).
CREATE TABLE voices (
	id         text        PRIMARY KEY,
	name       text        NOT NULL,
	gender     text        NOT NULL,
	language   text        NOT NULL,
	engine     text        NOT NULL,
	quality    text        NOT NULL DEFAULT '',
	license    text        NOT NULL DEFAULT '',
	speaker    text        NOT NULL DEFAULT '',
	priority   integer     NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX voices_language_name ON voices (language, lower(name));

CREATE TABLE voice_files (
	voice_id text   NOT NULL REFERENCES voices (id) ON DELETE CASCADE,
	role     text   NOT NULL,
	name     text   NOT NULL,
	size     bigint NOT NULL,
	sha256   text   NOT NULL,
	PRIMARY KEY (voice_id, role)
);

CREATE INDEX voice_files_sha256 ON voice_files (sha256);
