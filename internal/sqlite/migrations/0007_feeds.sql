-- 0007_feeds: media sizes and podcast feeds.
--
-- media.bytes is the size of the object at key, recorded when it is
-- published: a podcast feed's enclosure length. Media published before
-- this migration keep 0 until their audio is synthesised again.
ALTER TABLE media ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;

-- A project's podcast feed. token is the secret in the feed's URL; it is
-- unique, so that a token names one feed, and can be replaced (rotated).
CREATE TABLE feeds (
	project_id  INTEGER PRIMARY KEY REFERENCES projects (id),
	enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
	title       TEXT    NOT NULL,
	description TEXT    NOT NULL,
	author      TEXT    NOT NULL,
	image_url   TEXT    NOT NULL,
	language    TEXT    NOT NULL,
	category    TEXT    NOT NULL,
	explicit    INTEGER NOT NULL CHECK (explicit IN (0, 1)),
	token       TEXT    NOT NULL UNIQUE,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);

-- A feed's items: a project's processed live audios, newest first. The
-- feed reads the first few hundred entries, however many audios the
-- project has and whatever their states.
CREATE INDEX audios_feed ON audios (project_id, created_at DESC, id DESC)
	WHERE deleted_at IS NULL AND state = 'processed';

-- A feed's Last-Modified: the latest change of any audio of the project,
-- one index probe. The latest deletion is a probe of audios_list.
CREATE INDEX audios_changed ON audios (project_id, updated_at);
