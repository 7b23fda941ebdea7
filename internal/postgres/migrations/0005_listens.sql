-- 0005_listens: listening figures reported by the embedded player.
--
-- Daily counters only, so nothing about a listener is stored. day is the
-- UTC day; event is one of narrator.ListenEvents. Each event adds one to
-- its audio's row and to its project's row, so that a project's figures
-- are read from a few rows per day, however many audios it has.
CREATE TABLE audio_listens (
	audio_id bigint NOT NULL REFERENCES audios (id),
	event    text   NOT NULL,
	day      date   NOT NULL,
	count    bigint NOT NULL,
	PRIMARY KEY (audio_id, event, day)
);

CREATE TABLE project_listens (
	project_id bigint NOT NULL REFERENCES projects (id),
	day        date   NOT NULL,
	event      text   NOT NULL,
	count      bigint NOT NULL,
	PRIMARY KEY (project_id, day, event)
);

-- The embed finds an audio by its article's URL: the newest live one. The
-- index holds a hash of the URL, since a URL of 2,048 characters may be
-- longer than a B-tree entry may be.
CREATE INDEX audios_article_url ON audios (project_id, md5(article_url), created_at DESC, id DESC)
	WHERE deleted_at IS NULL AND article_url <> '';
