-- 0007_quota: per-account limits and fair scheduling of synthesis.
--
-- accounts.media_bytes is the size of the account's published media (the
-- bytes of its live audios' media), kept by the transactions that publish
-- and delete audios, so that checking the storage quota reads one row.
-- accounts.synthesis_round is the fair-scheduling round after the
-- account's last queued synthesis (narrator.FairRound). Changes that queue
-- a synthesis lock the account's row first, so that concurrent creates of
-- one account take their turns and never overshoot its limits.
ALTER TABLE accounts ADD COLUMN media_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN synthesis_round bigint NOT NULL DEFAULT 0;

UPDATE accounts SET media_bytes = (
	SELECT COALESCE(SUM(m.bytes), 0) FROM media m
	JOIN audios a ON a.id = m.audio_id
	JOIN projects p ON p.id = a.project_id
	WHERE p.account_id = accounts.id AND a.deleted_at IS NULL);

-- An account's audios waiting for speech, counted per project up to the
-- account's limit on every change that queues a synthesis.
CREATE INDEX audios_queued ON audios (project_id)
	WHERE deleted_at IS NULL AND state = 'unprocessed';
