package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// rowLock ends a SELECT. forUpdate locks the rows it returns until the
// transaction ends: a writer on another node that wants them waits, then
// reads what this transaction committed. A row that no longer matches the
// WHERE clause by then (a deleted audio) is left out.
type rowLock string

const (
	noLock    rowLock = ""
	forUpdate rowLock = "\nFOR UPDATE"
)

// externalIDIndex is the unique index on the external IDs of a project's
// live audios.
const externalIDIndex = "audios_external_id"

// audioColumns are the columns scanAudio reads.
const audioColumns = sqlstore.AudioColumns

// scanAudio reads a row of audioColumns (sqlstore.AudioColumns); no row is
// sql.ErrNoRows.
func scanAudio(row pgx.Row) (*narrator.Audio, error) {
	return sqlstore.ScanAudio(utcRow{row})
}

const findLiveAudioByIDSQL = `SELECT ` + audioColumns + `
FROM audios WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL`

// findAudioByExternalID is sqlstore.AudioByExternalID in tx.
func findAudioByExternalID(ctx context.Context, tx pgx.Tx, projectID int64, externalID string, lock rowLock) (*narrator.Audio, error) {
	return sqlstore.AudioByExternalID(ctx, pgTx{tx}, projectID, externalID, string(lock))
}

// resolveAudio finds a live audio of a project by reference: first as its
// numeric ID, if ref is an integer in canonical form ("12", not "012" or
// "+12"), then as its external ID. It loads the media.
func (s *Store) resolveAudio(ctx context.Context, tx pgx.Tx, projectID int64, ref string, lock rowLock) (*narrator.Audio, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && strconv.FormatInt(id, 10) == ref {
		a, err := scanAudio(tx.QueryRow(ctx, findLiveAudioByIDSQL+string(lock), id, projectID))
		switch {
		case err == nil:
			return a, s.loadMedia(ctx, tx, a)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	if ref == "" || !narrator.ValidText(ref) {
		return nil, sqlstore.AudioNotFound(strconv.Quote(ref))
	}
	a, err := findAudioByExternalID(ctx, tx, projectID, ref, lock)
	if err != nil {
		return nil, err
	}
	return a, s.loadMedia(ctx, tx, a)
}

// loadMedia is sqlstore.LoadMedia in tx.
func (s *Store) loadMedia(ctx context.Context, tx pgx.Tx, audios ...*narrator.Audio) error {
	return sqlstore.LoadMedia(ctx, dialect{s}, pgTx{tx}, audios...)
}

// createAlone runs a create in a transaction of its own, the reference
// create (sqlstore.CreateAudio): when another node creates an audio with
// the same external ID at the same moment, the unique index lets one
// insert through; the other transaction is run once more, finds that audio
// and updates it.
func (s *Store) createAlone(ctx context.Context, a *narrator.Audio) (created bool, err error) {
	created, err = sqlstore.CreateAudio(ctx, s.Store, a)
	if violatedUnique(err) == externalIDIndex {
		created, err = sqlstore.CreateAudio(ctx, s.Store, a)
	}
	if violatedUnique(err) != "" {
		return false, fmt.Errorf("create audio in project %d: %w", a.ProjectID, formatError(err, "audio"))
	}
	return created, err
}

// FindAudio returns a live audio of a project by reference: its numeric ID
// first, then its external ID. It returns ENOTFOUND if neither matches.
func (s *Store) FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	return sqlstore.ReadV(ctx, s.Store, fmt.Sprintf("find audio %q", ref), func(tx sqlstore.Tx) (*narrator.Audio, error) {
		a, err := s.resolveAudio(ctx, tx.(pgTx).tx, projectID, ref, noLock)
		if err != nil {
			return nil, fmt.Errorf("find audio %q in project %d: %w", ref, projectID, err)
		}
		return a, nil
	})
}

// UpdateAudio changes a live audio found by reference as FindAudio does. Nil
// fields of u keep the stored values; the merged audio is validated.
//
// A change to title, body or author makes the audio unprocessed again, clears
// its error, bumps its revision and enqueues its synthesis in the same
// transaction; its media keep their keys until the new result is published.
// Other changes do not resynthesise. UpdatedAt moves only if something
// changed. It returns ENOTFOUND if the audio is missing, and EINVALID if the
// new external ID is held by another live audio of the project, including
// one that another node gives it at the same moment.
func (s *Store) UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error) {
	got, err := s.updateAudioTx(ctx, projectID, ref, u)
	if violatedUnique(err) == externalIDIndex {
		// Another node took the external ID since this transaction looked;
		// run it again to find that audio and say which one it is.
		got, err = s.updateAudioTx(ctx, projectID, ref, u)
	}
	if violatedUnique(err) == externalIDIndex {
		err = narrator.Errorf(narrator.EINVALID, "external_id is already used by another audio")
	}
	if err != nil {
		return nil, fmt.Errorf("update audio %q in project %d: %w", ref, projectID, err)
	}
	return got, nil
}

// updateAudioTx runs updateAudio in a transaction of its own, on the audio
// found by reference and locked.
func (s *Store) updateAudioTx(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer rollback(ctx, tx)
	cur, err := s.resolveAudio(ctx, tx, projectID, ref, forUpdate)
	if err != nil {
		return nil, err
	}
	got, err := s.updateAudio(ctx, tx, cur, u)
	if err != nil {
		return nil, fmt.Errorf("audio %d: %w", cur.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("audio %d: commit: %w", cur.ID, err)
	}
	return got, nil
}

// updateAudio applies u to cur, a live audio locked with its media loaded
// (sqlstore.UpdateAudio). A unique violation of externalIDIndex is
// returned as it is, for the caller to retry.
func (s *Store) updateAudio(ctx context.Context, tx pgx.Tx, cur *narrator.Audio, u narrator.AudioUpdate) (*narrator.Audio, error) {
	return sqlstore.UpdateAudio(ctx, s.Store, pgTx{tx}, cur, u, func(adds bool) (int64, error) {
		return s.planSynthesis(ctx, tx, cur.ProjectID, adds, true)
	})
}

// newestSeqSQL reads the highest number (audios.seq) given in a project,
// deleted audios included, with one probe of the audios_seq index.
const newestSeqSQL = `SELECT coalesce(max(seq), 0) FROM audios WHERE project_id = $1`

// listAudiosSQL is a page of a project's live audios, a range of numbers
// in the audios_seq index (narrator.PageSeqs): the zero time of "since" is
// the year 1, before every audio.
const listAudiosSQL = `
SELECT ` + audioColumns + `
FROM audios
WHERE project_id = $1 AND seq > $2 AND seq <= $3 AND deleted_at IS NULL AND created_at >= $4
ORDER BY seq DESC`

// ListAudios returns a page of a project's live audios created at or after
// since (the zero time means all), newest first (in the order they were
// added to the project), media included. A page is a range of the
// project's audio numbers (narrator.PageSeqs): it holds at most perPage
// audios, fewer where audios were deleted or since leaves them out. Pages
// start at 1; a page past the end gives an empty slice. perPage must be
// positive.
func (s *Store) ListAudios(ctx context.Context, projectID int64, since time.Time, page, perPage int) ([]*narrator.Audio, error) {
	if _, err := narrator.PageOffset(page, perPage); err != nil {
		return nil, err
	}
	return sqlstore.ReadV(ctx, s.Store, "list audios", func(tx sqlstore.Tx) ([]*narrator.Audio, error) {
		var newest int64
		if err := tx.(pgTx).tx.QueryRow(ctx, newestSeqSQL, projectID).Scan(&newest); err != nil {
			return nil, fmt.Errorf("list audios of project %d: %w", projectID, err)
		}
		after, upTo, err := narrator.PageSeqs(page, perPage, newest)
		if err != nil {
			return nil, err
		}
		if upTo <= after {
			return []*narrator.Audio{}, nil
		}
		audios, err := sqlstore.QueryAudios(ctx, dialect{s}, tx, listAudiosSQL, projectID, after, upTo, since)
		if err != nil {
			return nil, fmt.Errorf("list audios of project %d: %w", projectID, err)
		}
		return audios, nil
	})

}
