-- 0016_audio_seq: each audio gets its number in its project, in the order
-- audios were added to it (1, 2, 3…; the newest holds the highest, and a
-- number is never reused, since audio rows are only marked deleted). A list
-- page is a range of these numbers, one probe of audios_seq, however deep
-- (narrator.PageSeqs). Audios of before are numbered in the list's order of
-- before: by created_at, then id.
ALTER TABLE audios ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

UPDATE audios SET seq = numbered.n
FROM (SELECT id, row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) AS n FROM audios) AS numbered
WHERE audios.id = numbered.id;

CREATE UNIQUE INDEX audios_seq ON audios (project_id, seq);
