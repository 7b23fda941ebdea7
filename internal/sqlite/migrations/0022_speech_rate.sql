-- 0022_speech_rate: a project's speaking-rate factor (Project.SpeechRate),
-- 1 for the projects made before it.
ALTER TABLE projects ADD COLUMN speech_rate REAL NOT NULL DEFAULT 1;
