-- 0010_quota: per-account limits and fair scheduling of synthesis.
--
-- What an account holds against its limits, kept by the transactions that
-- create, change, publish, fail, delete and import its audios
-- (narrator.UsageDelta), so that checking a limit reads one row:
-- accounts.queued counts its live unprocessed audios, accounts.media_bytes
-- the bytes of its live audios' published media. accounts.synthesis_round
-- is the fair-scheduling round after its last queued synthesis
-- (narrator.FairRound).
ALTER TABLE accounts ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN media_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN synthesis_round INTEGER NOT NULL DEFAULT 0;

UPDATE accounts SET
	queued = (
		SELECT COUNT(*) FROM audios a JOIN projects p ON p.id = a.project_id
		WHERE p.account_id = accounts.id AND a.deleted_at IS NULL AND a.state = 'unprocessed'),
	media_bytes = (
		SELECT COALESCE(SUM(m.bytes), 0) FROM media m
		JOIN audios a ON a.id = m.audio_id
		JOIN projects p ON p.id = a.project_id
		WHERE p.account_id = accounts.id AND a.deleted_at IS NULL);
