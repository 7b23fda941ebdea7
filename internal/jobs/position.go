package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
)

// synthesisPositionSQL finds an audio's newest waiting synthesis job and
// counts the jobs River will fetch before it: available ones of its queue
// that come first in River's order (priority, scheduled_at, id). It reads
// the same on SQLite and PostgreSQL: ->> takes a key on both, and $n
// placeholders are positional on both.
const synthesisPositionSQL = `
WITH me AS (
	SELECT id, priority, scheduled_at FROM river_job
	WHERE kind = $2 AND queue = $3 AND state IN ('available', 'scheduled', 'retryable', 'pending')
		AND CAST(args ->> 'audio_id' AS TEXT) = $1
	ORDER BY id DESC LIMIT 1
)
SELECT (SELECT count(*) FROM river_job j
	WHERE j.state = 'available' AND j.queue = $3
		AND (j.priority < me.priority OR (j.priority = me.priority
			AND (j.scheduled_at < me.scheduled_at OR (j.scheduled_at = me.scheduled_at AND j.id < me.id)))))
FROM me`

// SynthesisQueuePosition returns the place of an audio's synthesis job in
// the line of jobs waiting for a synthesis worker: 1 when it is the next
// one to start. It reports false when no synthesis job of the audio
// waits: it runs, or it is done.
func (q *Queue[TTx]) SynthesisQueuePosition(ctx context.Context, audioID int64) (int, bool, error) {
	var ahead int
	err := q.exec.QueryRow(ctx, synthesisPositionSQL,
		strconv.FormatInt(audioID, 10), narrator.SynthesizeJob{}.JobKind(), queueSynthesize).Scan(&ahead)
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("queue position of audio %d: %w", audioID, err)
	}
	return ahead + 1, true, nil
}
