-- 0004_cluster: what many nodes and large archives need.
--
-- projects.audio_count is the number of live audios, kept by the
-- transactions that create and delete them, so that reading a project never
-- counts its audios.
ALTER TABLE projects ADD COLUMN audio_count INTEGER NOT NULL DEFAULT 0;

UPDATE projects SET audio_count = (
	SELECT COUNT(*) FROM audios a WHERE a.project_id = projects.id AND a.deleted_at IS NULL);

-- The lease of the job attempt that is synthesising an audio: a second
-- delivery of the same revision (River rescues jobs whose node died) waits
-- while the lease is held and renewed, so that one node does the work.
ALTER TABLE audios ADD COLUMN lease_holder TEXT;
ALTER TABLE audios ADD COLUMN lease_revision INTEGER;
ALTER TABLE audios ADD COLUMN lease_until INTEGER;
