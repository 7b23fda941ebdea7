-- 0024_clips: a project's intro and outro (narrator.Clip), decoded to
-- 16-bit little-endian mono PCM, played around every audio it renders.
CREATE TABLE project_clips (
	project_id  bigint      NOT NULL REFERENCES projects (id),
	kind        text        NOT NULL,
	sample_rate integer     NOT NULL,
	pcm         bytea       NOT NULL,
	updated_at  timestamptz NOT NULL,
	PRIMARY KEY (project_id, kind)
);
