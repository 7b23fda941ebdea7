-- 0013_publication: the publisher's decisions. An audio without a row in
-- audio_publications is published, as every audio was before, and a
-- project without a row in project_access is public with new audios
-- published: nothing changes for existing installs. The migration has the
-- same number in every dialect.
CREATE TABLE audio_publications (
	audio_id   INTEGER PRIMARY KEY REFERENCES audios (id) ON DELETE CASCADE,
	project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
	state      TEXT    NOT NULL CHECK (state IN ('published', 'draft', 'scheduled')),
	publish_at INTEGER,
	updated_at INTEGER NOT NULL
);

-- A podcast feed's Last-Modified reads the latest decision and the latest
-- schedule come due of its project, each the first entry of an index.
CREATE INDEX audio_publications_changed ON audio_publications (project_id, updated_at);
CREATE INDEX audio_publications_due ON audio_publications (project_id, publish_at);

CREATE TABLE project_access (
	project_id      INTEGER PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
	mode            TEXT    NOT NULL CHECK (mode IN ('public', 'signed')),
	allowed_origins TEXT    NOT NULL DEFAULT '',
	signing_secret  TEXT    NOT NULL DEFAULT '',
	new_audio_state TEXT    NOT NULL DEFAULT 'published',
	updated_at      INTEGER NOT NULL
);

-- The media server finds the project of a folder of media it serves, to
-- ask for a token in a signed project.
CREATE INDEX media_key ON media (key);
