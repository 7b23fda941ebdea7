-- 0024_clips: a project's intro and outro (narrator.Clip), decoded to
-- 16-bit little-endian mono PCM, played around every audio it renders.
CREATE TABLE project_clips (
	project_id  INTEGER NOT NULL REFERENCES projects (id),
	kind        TEXT    NOT NULL,
	sample_rate INTEGER NOT NULL,
	pcm         BLOB    NOT NULL,
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (project_id, kind)
);
