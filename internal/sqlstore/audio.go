package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/narrator/narrator"
)

// AudioColumns are the columns ScanAudio reads.
const AudioColumns = `id, project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, deleted_at`

// ScanAudio reads a row of AudioColumns: the audio without its media.
func ScanAudio(row Row) (*narrator.Audio, error) {
	var a narrator.Audio
	var ext *string
	var deleted *time.Time
	if err := row.Scan(&a.ID, &a.ProjectID, &ext, &a.Title, &a.Body, &a.Author, &a.ArticleURL, &a.Metadata,
		&a.State, &a.Error, &a.Revision, &a.DurationMS, &a.CreatedAt, &a.UpdatedAt, &deleted); err != nil {
		return nil, err
	}
	if ext != nil {
		a.ExternalID = *ext
	}
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	a.Deleted = deleted != nil
	return &a, nil
}

// QueryAudios runs, in tx of db, a query that selects AudioColumns, and
// loads the media of the audios it returns. The slice is empty, not nil,
// when there are none.
func QueryAudios(ctx context.Context, db DB, tx Tx, query string, args ...any) ([]*narrator.Audio, error) {
	audios, err := queryAll(ctx, tx, ScanAudio, query, args...)
	if err != nil {
		return nil, err
	}
	if err := LoadMedia(ctx, db, tx, audios...); err != nil {
		return nil, err
	}
	return audios, nil
}

// loadMediaSQL reads the media of several audios, their IDs given as the
// dialect's list (%s, DB.InList).
const loadMediaSQL = `
SELECT id, audio_id, content_type, key, bytes
FROM media
WHERE audio_id %s`

// LoadMediaSQL is the query of LoadMedia on db, for the tests of its plan:
// its one argument is the list of the audios' IDs.
func LoadMediaSQL(db DB) string { return fmt.Sprintf(loadMediaSQL, db.InList()) }

// LoadMedia sets, in tx of db, the Media of the given audios with one
// query, each audio's in the order of narrator.SortMedia (that of
// narrator.MediaTypes).
func LoadMedia(ctx context.Context, db DB, tx Tx, audios ...*narrator.Audio) error {
	if len(audios) == 0 {
		return nil
	}
	ids := make([]int64, len(audios))
	for i, a := range audios {
		ids[i] = a.ID
	}
	media, err := queryAll(ctx, tx, scanMedia, LoadMediaSQL(db), ids)
	if err != nil {
		return fmt.Errorf("load media: %w", err)
	}
	SetMedia(audios, media)
	return nil
}

// SetMedia sets the Media of each of audios to those of media that are
// its, in the order of narrator.SortMedia (that of narrator.MediaTypes).
func SetMedia(audios []*narrator.Audio, media []narrator.Media) {
	byID := make(map[int64]*narrator.Audio, len(audios))
	for _, a := range audios {
		byID[a.ID] = a
		a.Media = make([]narrator.Media, 0, len(narrator.MediaTypes()))
	}
	for _, m := range media {
		if a := byID[m.AudioID]; a != nil {
			a.Media = append(a.Media, m)
		}
	}
	for _, a := range audios {
		narrator.SortMedia(a.Media)
	}
}

// scanMedia reads a row of a media's id, audio_id, content_type, key and
// bytes; a NULL key is "".
func scanMedia(row Row) (narrator.Media, error) {
	var m narrator.Media
	var key *string
	if err := row.Scan(&m.ID, &m.AudioID, &m.ContentType, &key, &m.Bytes); err != nil {
		return m, err
	}
	if key != nil {
		m.Key = *key
	}
	return m, nil
}

// AudioNotFound is the ENOTFOUND of an audio that ref, as the error shows
// it (an ID, or an external ID quoted), does not find.
func AudioNotFound(ref string) error {
	return narrator.Errorf(narrator.ENOTFOUND, "audio %s not found", ref)
}

const findAudioByIDSQL = `SELECT ` + AudioColumns + ` FROM audios WHERE id = ?`

// findAudioByID returns an audio, deleted or not, without its media; lock
// is "" or DB.ForUpdate.
func findAudioByID(ctx context.Context, tx Tx, id int64, lock string) (*narrator.Audio, error) {
	a, err := ScanAudio(tx.QueryRow(ctx, findAudioByIDSQL+lock, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, AudioNotFound(strconv.FormatInt(id, 10))
	}
	return a, err
}

// FindLiveAudioByExternalIDSQL finds the live audio of a project with an
// external ID, through the index audios_external_id.
const FindLiveAudioByExternalIDSQL = `SELECT ` + AudioColumns + `
FROM audios WHERE project_id = ? AND external_id = ? AND deleted_at IS NULL`

// AudioByExternalID returns, in tx, the live audio of a project with that
// external ID, without its media, or ENOTFOUND; lock is "" or
// DB.ForUpdate.
func AudioByExternalID(ctx context.Context, tx Tx, projectID int64, externalID, lock string) (*narrator.Audio, error) {
	a, err := ScanAudio(tx.QueryRow(ctx, FindLiveAudioByExternalIDSQL+lock, projectID, externalID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, AudioNotFound(strconv.Quote(externalID))
	}
	return a, err
}

// AudioForSynthesis returns an audio, deleted ones included (with Deleted
// set, so a worker can skip them), with its media and its project. It
// returns ENOTFOUND if the audio does not exist.
func (s *Store) AudioForSynthesis(ctx context.Context, audioID int64) (*narrator.Audio, *narrator.Project, error) {
	name := fmt.Sprintf("audio %d for synthesis", audioID)
	var a *narrator.Audio
	var p *narrator.Project
	err := s.read(ctx, name, func(tx Tx) error {
		var err error
		if a, err = findAudioByID(ctx, tx, audioID, ""); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := LoadMedia(ctx, s.db, tx, a); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if p, err = ProjectByID(ctx, tx, a.ProjectID); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return a, p, nil

}

const updateAudioSQL = `
UPDATE audios SET external_id = ?, title = ?, body = ?, author = ?, article_url = ?, metadata = ?,
	state = ?, error = ?, revision = ?, updated_at = ?
WHERE id = ?`

// UpdateAudio applies u to cur, a live audio locked in tx of the store s
// with its media loaded, as narrator.PlanUpdate decides, with the plan's
// effects, and returns the result. planSynthesis plans the synthesis that
// the change queues, if it queues one, for cur's project with its
// account's limits checked (DB.PlanSynthesis; adds as there). The error of
// the row's UPDATE is returned as it is: a unique violation of the
// external ID, which another node's write can cause, is the caller's to
// retry or report.
func UpdateAudio(ctx context.Context, s *Store, tx Tx, cur *narrator.Audio, u narrator.AudioUpdate, planSynthesis func(adds bool) (int64, error)) (*narrator.Audio, error) {
	plan, err := narrator.PlanUpdate(cur, u, s.now())
	if err != nil || !plan.Changed {
		return &plan.Next, err
	}
	next := &plan.Next
	if plan.Effects.Synthesize {
		if plan.Effects.Round, err = planSynthesis(cur.State != narrator.StateUnprocessed); err != nil {
			return nil, err
		}
	}
	if plan.ExternalIDChanged {
		other, err := AudioByExternalID(ctx, tx, cur.ProjectID, next.ExternalID, "")
		switch {
		case err == nil:
			return nil, narrator.Errorf(narrator.EINVALID, "external_id %q is already used by audio %d", next.ExternalID, other.ID)
		case narrator.ErrorCode(err) != narrator.ENOTFOUND:
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, updateAudioSQL, NullString(next.ExternalID), next.Title, next.Body, next.Author,
		next.ArticleURL, next.Metadata, next.State, next.Error, next.Revision, next.UpdatedAt, next.ID); err != nil {
		return nil, err
	}
	if err := s.db.ApplyEffects(ctx, tx, next, plan.Effects); err != nil {
		return nil, err
	}
	return next, nil
}

const setMediaKeySQL = `UPDATE media SET key = ?, bytes = ? WHERE id = ?`

const finishAudioSQL = `
UPDATE audios SET state = 'processed', error = '', duration_ms = ?, updated_at = ?,
	lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = ?`

// FinishAudio records the published media of one revision of an audio: it
// sets each media's key and size from r, marks the audio processed with
// r's duration, releases its synthesis lease, and applies the plan's
// effects (the removal of the keys it replaced among them), all in one
// transaction. It returns ECONFLICT, changing nothing, if the audio is
// deleted, at another revision or already processed at this one
// (narrator.PlanFinish): the caller then discards its files. It returns
// ENOTFOUND if the audio does not exist.
func (s *Store) FinishAudio(ctx context.Context, audioID int64, revision int, r narrator.Rendering) error {
	return s.write(ctx, fmt.Sprintf("finish audio %d", audioID), func(tx Tx) error {
		if err := s.finishAudio(ctx, tx, audioID, revision, r); err != nil {
			return fmt.Errorf("finish audio %d revision %d: %w", audioID, revision, err)
		}
		return nil
	})
}

func (s *Store) finishAudio(ctx context.Context, tx Tx, audioID int64, revision int, r narrator.Rendering) error {
	a, err := findAudioByID(ctx, tx, audioID, s.db.ForUpdate())
	if err != nil {
		return err
	}
	if err := LoadMedia(ctx, s.db, tx, a); err != nil {
		return err
	}
	plan, err := narrator.PlanFinish(a, revision, r)
	if err != nil {
		return err
	}
	for _, m := range plan.Media {
		if _, err := tx.Exec(ctx, setMediaKeySQL, m.Key, m.Bytes, m.ID); err != nil {
			return fmt.Errorf("set %s key: %w", m.ContentType, err)
		}
	}
	next := plan.Apply(a, r.Duration.Milliseconds(), s.now())
	if _, err := tx.Exec(ctx, finishAudioSQL, next.DurationMS, next.UpdatedAt, audioID); err != nil {
		return err
	}
	return s.db.ApplyEffects(ctx, tx, &next, plan.Effects)
}

const failAudioSQL = `
UPDATE audios SET state = 'failed', error = ?, updated_at = ?,
	lease_holder = NULL, lease_revision = NULL, lease_until = NULL
WHERE id = ?`

// FailAudio marks a revision of an audio as failed, with a message for the
// publisher, and releases its synthesis lease. It does nothing if the audio
// is deleted, at another revision, or already processed (a duplicate job
// succeeded), as narrator.PlanFail decides. It returns ENOTFOUND if the
// audio does not exist.
func (s *Store) FailAudio(ctx context.Context, audioID int64, revision int, message string) error {
	return s.write(ctx, fmt.Sprintf("fail audio %d", audioID), func(tx Tx) error {
		a, err := findAudioByID(ctx, tx, audioID, s.db.ForUpdate())
		if err != nil {
			return fmt.Errorf("fail audio %d: %w", audioID, err)
		}
		if !narrator.PlanFail(a, revision) {
			return nil
		}
		if err := LoadMedia(ctx, s.db, tx, a); err != nil {
			return fmt.Errorf("fail audio %d: %w", audioID, err)
		}
		next := a.Failed(message, s.now())
		if _, err := tx.Exec(ctx, failAudioSQL, message, next.UpdatedAt, audioID); err != nil {
			return fmt.Errorf("fail audio %d: %w", audioID, err)
		}
		if err := s.db.ApplyEffects(ctx, tx, &next, narrator.ChangeEffects(a, &next)); err != nil {
			return fmt.Errorf("fail audio %d: %w", audioID, err)
		}
		return nil
	})
}

const deleteAudioSQL = `UPDATE audios SET deleted_at = ? WHERE id = ?`

// DeleteAudio marks a live audio, found by reference as FindAudio does, as
// deleted, and in the same transaction applies narrator.PlanDelete's
// effects, the removal of its media files among them. It returns the audio
// as it was, with Deleted set, or ENOTFOUND.
func (s *Store) DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	return WriteV(ctx, s, fmt.Sprintf("delete audio %q", ref), func(tx Tx) (*narrator.Audio, error) {
		a, err := s.db.ResolveAudio(ctx, tx, projectID, ref)
		if err != nil {
			return nil, fmt.Errorf("delete audio %q in project %d: %w", ref, projectID, err)
		}
		plan := narrator.PlanDelete(a)
		if _, err := tx.Exec(ctx, deleteAudioSQL, s.now(), a.ID); err != nil {
			return nil, fmt.Errorf("delete audio %d: %w", a.ID, err)
		}
		if err := s.db.ApplyEffects(ctx, tx, &plan.Next, plan.Effects); err != nil {
			return nil, fmt.Errorf("delete audio %d: %w", a.ID, err)
		}
		return &plan.Next, nil
	})
}

// ResynthesizeAudio makes a live audio, found by reference as FindAudio does,
// unprocessed again even if its text is unchanged: in one transaction it
// clears its error, bumps its revision and enqueues its synthesis. Its
// media keep their keys until the new result is published. It returns the
// updated audio, or ENOTFOUND.
func (s *Store) ResynthesizeAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	return WriteV(ctx, s, fmt.Sprintf("resynthesize audio %q", ref), func(tx Tx) (*narrator.Audio, error) {
		a, err := s.db.ResolveAudio(ctx, tx, projectID, ref)
		if err != nil {
			return nil, fmt.Errorf("resynthesize audio %q in project %d: %w", ref, projectID, err)
		}
		if err := Resynthesize(ctx, s, tx, a); err != nil {
			return nil, err
		}
		return a, nil
	})
}

const resynthesizeSQL = `
UPDATE audios SET state = ?, error = ?, revision = ?, updated_at = ?
WHERE id = ?`

// Resynthesize makes a, a live audio locked in tx of the store s,
// unprocessed at a new revision (narrator.Audio.Resynthesize) with the
// change's effects, its synthesis among them. The account's limits apply
// (narrator.Limits.CheckSynthesis), to a publisher's resynthesis and to a
// pronunciation rule's re-queueing alike.
func Resynthesize(ctx context.Context, s *Store, tx Tx, a *narrator.Audio) error {
	round, err := s.db.PlanSynthesis(ctx, tx, a.ProjectID, a.State != narrator.StateUnprocessed, true)
	if err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	before := *a
	a.Resynthesize(s.now())
	if _, err := tx.Exec(ctx, resynthesizeSQL, a.State, a.Error, a.Revision, a.UpdatedAt, a.ID); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	eff := narrator.ChangeEffects(&before, a)
	eff.Round = round
	if err := s.db.ApplyEffects(ctx, tx, a, eff); err != nil {
		return fmt.Errorf("resynthesize audio %d: %w", a.ID, err)
	}
	return nil
}
