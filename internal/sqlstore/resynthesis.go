package sqlstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/narrator/narrator"
)

// ResynthesizeAudios re-queues, in one write, those of the audios ids of
// job's project that still need it (narrator.ResynthesisJob.Needs, checked
// again under the write), each within the account's limits as a
// publisher's resynthesis is. It stops at the first refusal (EQUEUEFULL,
// EQUOTA), keeps what it did, and returns how many it re-queued and the
// refusal.
func (s *Store) ResynthesizeAudios(ctx context.Context, job narrator.ResynthesisJob, ids []int64) (int, error) {
	// A refusal stops the loop but keeps, and commits, what was done.
	var refused error
	n, err := WriteV(ctx, s, fmt.Sprintf("resynthesize audios of project %d", job.ProjectID), func(tx Tx) (int, error) {
		n := 0
		for _, id := range ids {
			a, err := s.db.ResolveAudio(ctx, tx, job.ProjectID, strconv.FormatInt(id, 10))
			if narrator.ErrorCode(err) == narrator.ENOTFOUND {
				continue
			}
			if err != nil {
				return 0, fmt.Errorf("resynthesize audio %d: %w", id, err)
			}
			if a.ID != id || !job.Needs(a) {
				continue
			}
			if err := Resynthesize(ctx, s, tx, a); err != nil {
				if c := narrator.ErrorCode(err); c == narrator.EQUEUEFULL || c == narrator.EQUOTA {
					refused = err
					break
				}
				return 0, err
			}
			n++
		}
		return n, nil
	})
	if err != nil {
		return 0, err
	}
	return n, refused
}
