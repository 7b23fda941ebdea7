-- 0012_voices: the neural voices the operator installed. Their files live
-- in the media store under voices/SHA256; these rows are the catalog
-- entries every node reads. The migration has the same number in every
-- dialect.
CREATE TABLE voices (
	id         TEXT    PRIMARY KEY,
	name       TEXT    NOT NULL,
	gender     TEXT    NOT NULL,
	language   TEXT    NOT NULL,
	engine     TEXT    NOT NULL,
	quality    TEXT    NOT NULL DEFAULT '',
	license    TEXT    NOT NULL DEFAULT '',
	speaker    TEXT    NOT NULL DEFAULT '',
	priority   INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);

CREATE UNIQUE INDEX voices_language_name ON voices (language, lower(name));

CREATE TABLE voice_files (
	voice_id TEXT    NOT NULL REFERENCES voices (id) ON DELETE CASCADE,
	role     TEXT    NOT NULL,
	name     TEXT    NOT NULL,
	size     INTEGER NOT NULL,
	sha256   TEXT    NOT NULL,
	PRIMARY KEY (voice_id, role)
);

CREATE INDEX voice_files_sha256 ON voice_files (sha256);
