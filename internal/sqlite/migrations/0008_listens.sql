-- 0008_listens: listening figures reported by the embedded player.
--
-- Daily counters only, so nothing about a listener is stored. day is the
-- UTC midnight of the day, in UTC Unix microseconds; event is one of
-- narrator.ListenEvents. Each event adds one to its audio's row and to its
-- project's row, so that a project's figures are read from a few rows per
-- day, however many audios it has.
CREATE TABLE audio_listens (
	audio_id INTEGER NOT NULL REFERENCES audios (id),
	event    TEXT    NOT NULL,
	day      INTEGER NOT NULL,
	count    INTEGER NOT NULL,
	PRIMARY KEY (audio_id, event, day)
) WITHOUT ROWID;

CREATE TABLE project_listens (
	project_id INTEGER NOT NULL REFERENCES projects (id),
	day        INTEGER NOT NULL,
	event      TEXT    NOT NULL,
	count      INTEGER NOT NULL,
	PRIMARY KEY (project_id, day, event)
) WITHOUT ROWID;

-- The embed finds an audio by its article's URL: the newest live one.
CREATE INDEX audios_article_url ON audios (project_id, article_url, created_at DESC, id DESC)
	WHERE deleted_at IS NULL AND article_url <> '';
