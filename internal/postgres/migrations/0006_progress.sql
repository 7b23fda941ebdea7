-- 0006_progress: synthesis progress, for live streams and progress bars.
--
-- The attempt that holds an audio's synthesis lease reports here, a few
-- times a second at most, how many of the revision's units it has
-- written, and where its live playlist is once the first segment is out,
-- so that every node can answer for it. The row goes when the lease is
-- released; a stale one (an older revision, an audio since processed)
-- means nothing (narrator.SynthesisProgress.Current).
CREATE TABLE synthesis_progress (
	audio_id    bigint      PRIMARY KEY REFERENCES audios (id),
	holder      text        NOT NULL,
	revision    integer     NOT NULL,
	units_done  integer     NOT NULL CHECK (units_done >= 0),
	units_total integer     NOT NULL CHECK (units_total >= 0),
	live_key    text        NOT NULL,
	started_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL
);
