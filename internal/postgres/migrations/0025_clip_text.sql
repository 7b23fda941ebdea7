-- 0025_clip_text: a spoken intro or outro keeps the text and the voice
-- it was spoken from (narrator.Clip.Text, Voice); '' on an uploaded one.
ALTER TABLE project_clips ADD COLUMN text text NOT NULL DEFAULT '';
ALTER TABLE project_clips ADD COLUMN voice text NOT NULL DEFAULT '';
