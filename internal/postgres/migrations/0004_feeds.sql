-- 0004_feeds: media sizes and podcast feeds.
--
-- media.bytes is the size of the object at key, recorded when it is
-- published: a podcast feed's enclosure length. Media published before
-- this migration keep 0 until their audio is synthesised again.
ALTER TABLE media ADD COLUMN bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0);

-- A project's podcast feed. token is the secret in the feed's URL; it is
-- unique, so that a token names one feed, and can be replaced (rotated).
CREATE TABLE feeds (
	project_id  bigint      PRIMARY KEY REFERENCES projects (id),
	enabled     boolean     NOT NULL,
	title       text        NOT NULL,
	description text        NOT NULL,
	author      text        NOT NULL,
	image_url   text        NOT NULL,
	language    text        NOT NULL,
	category    text        NOT NULL,
	explicit    boolean     NOT NULL,
	token       text        NOT NULL UNIQUE,
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL
);

-- A feed's items: a project's processed live audios, newest first. The
-- feed reads the first few hundred entries, however many audios the
-- project has and whatever their states.
CREATE INDEX audios_feed ON audios (project_id, created_at DESC, id DESC)
	WHERE deleted_at IS NULL AND state = 'processed';

-- A feed's Last-Modified: the latest change and the latest deletion of
-- any audio of the project, one index probe each.
CREATE INDEX audios_changed ON audios (project_id, updated_at);
CREATE INDEX audios_deleted ON audios (project_id, deleted_at)
	WHERE deleted_at IS NOT NULL;
