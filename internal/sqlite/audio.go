package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// audioColumns are the columns scanAudio reads.
const audioColumns = `id, project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, deleted_at`

// audioColumnsA are audioColumns of the audios table aliased as a, for
// queries that join its media.
const audioColumnsA = `a.id, a.project_id, a.external_id, a.title, a.body, a.author, a.article_url, a.metadata,
	a.state, a.error, a.revision, a.duration_ms, a.created_at, a.updated_at, a.deleted_at`

// audioRow receives the columns of audioColumns.
type audioRow struct {
	a                narrator.Audio
	ext              sql.NullString
	meta             string
	created, updated int64
	deleted          sql.NullInt64
}

func (r *audioRow) dest() []any {
	a := &r.a
	return []any{&a.ID, &a.ProjectID, &r.ext, &a.Title, &a.Body, &a.Author, &a.ArticleURL, &r.meta,
		&a.State, &a.Error, &a.Revision, &a.DurationMS, &r.created, &r.updated, &r.deleted}
}

// audio decodes the scanned row.
func (r *audioRow) audio() (*narrator.Audio, error) {
	a := r.a
	a.ExternalID = r.ext.String
	a.Metadata = map[string]string{}
	if err := json.Unmarshal([]byte(r.meta), &a.Metadata); err != nil {
		return nil, fmt.Errorf("audio %d: decode metadata: %w", a.ID, err)
	}
	if a.Metadata == nil { // the JSON was null
		a.Metadata = map[string]string{}
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(r.created), fromMicros(r.updated)
	a.Deleted = r.deleted.Valid
	return &a, nil
}

func scanAudio(sc interface{ Scan(...any) error }) (*narrator.Audio, error) {
	var r audioRow
	if err := sc.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.audio()
}

// mediaColumnsM are the columns of a media row aliased as m that
// scanAudiosWithMedia reads after an audio's; NULL where an audio has none.
const mediaColumnsM = `m.id, m.content_type, m.key, m.bytes`

// scanAudiosWithMedia reads rows of audioColumnsA then mediaColumnsM, the
// rows of one audio next to each other, into audios with their media in
// the order of narrator.MediaTypes.
func scanAudiosWithMedia(rows *sql.Rows) ([]*narrator.Audio, error) {
	defer rows.Close()
	audios := []*narrator.Audio{}
	var cur *narrator.Audio
	for rows.Next() {
		var r audioRow
		var mid, bytes sql.NullInt64
		var ct, key sql.NullString
		if err := rows.Scan(append(r.dest(), &mid, &ct, &key, &bytes)...); err != nil {
			return nil, err
		}
		if cur == nil || cur.ID != r.a.ID {
			a, err := r.audio()
			if err != nil {
				return nil, err
			}
			a.Media = make([]narrator.Media, 0, 2)
			audios = append(audios, a)
			cur = a
		}
		if mid.Valid {
			cur.Media = append(cur.Media, narrator.Media{ID: mid.Int64, AudioID: cur.ID, ContentType: ct.String, Key: key.String, Bytes: bytes.Int64})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, a := range audios {
		narrator.SortMedia(a.Media)
	}
	return audios, nil
}

// encodeMetadata encodes metadata as a JSON object; nil becomes {}.
func encodeMetadata(m map[string]string) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode metadata: %w", err)
	}
	return string(b), nil
}

const findLiveAudioWithMediaByIDSQL = `SELECT ` + audioColumnsA + `, ` + mediaColumnsM + `
FROM audios a LEFT JOIN media m ON m.audio_id = a.id
WHERE a.id = ? AND a.project_id = ? AND a.deleted_at IS NULL`

const findLiveAudioWithMediaByExternalIDSQL = `SELECT ` + audioColumnsA + `, ` + mediaColumnsM + `
FROM audios a LEFT JOIN media m ON m.audio_id = a.id
WHERE a.project_id = ? AND a.external_id = ? AND a.deleted_at IS NULL`

// rowsFunc runs one query with its arguments: a prepared statement's
// QueryContext, or a query text bound to a transaction (txRows).
type rowsFunc func(ctx context.Context, args ...any) (*sql.Rows, error)

// txRows binds query to tx.
func txRows(tx *sql.Tx, query string) rowsFunc {
	return func(ctx context.Context, args ...any) (*sql.Rows, error) {
		return tx.QueryContext(ctx, query, args...)
	}
}

// resolveAudio finds a live audio of a project by reference, with its
// media, in one statement: first as its numeric ID, if ref is an integer in
// canonical form ("12", not "012" or "+12"), through byID
// (findLiveAudioWithMediaByIDSQL), then as its external ID through
// byExternalID (findLiveAudioWithMediaByExternalIDSQL).
func resolveAudio(ctx context.Context, byID, byExternalID rowsFunc, projectID int64, ref string) (*narrator.Audio, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && strconv.FormatInt(id, 10) == ref {
		a, err := oneAudio(byID(ctx, id, projectID))
		if a != nil || err != nil {
			return a, err
		}
	}
	if ref == "" {
		return nil, sqlstore.AudioNotFound(`""`)
	}
	a, err := oneAudio(byExternalID(ctx, projectID, ref))
	if a == nil && err == nil {
		return nil, sqlstore.AudioNotFound(strconv.Quote(ref))
	}
	return a, err
}

// resolveAudioTx is resolveAudio inside tx.
func resolveAudioTx(ctx context.Context, tx *sql.Tx, projectID int64, ref string) (*narrator.Audio, error) {
	return resolveAudio(ctx, txRows(tx, findLiveAudioWithMediaByIDSQL), txRows(tx, findLiveAudioWithMediaByExternalIDSQL), projectID, ref)
}

// oneAudio reads the audio of rows from a query of one audio with its
// media; nil if there is none.
func oneAudio(rows *sql.Rows, err error) (*narrator.Audio, error) {
	if err != nil {
		return nil, err
	}
	audios, err := scanAudiosWithMedia(rows)
	if err != nil || len(audios) == 0 {
		return nil, err
	}
	return audios[0], nil
}

// FindAudio returns a live audio of a project by reference: its numeric ID
// first, then its external ID. It returns ENOTFOUND if neither matches.
// The audio and its media are read in one statement, a snapshot of their
// own, so no transaction is needed; while the database has not changed
// since, the read cache answers instead.
func (s *Store) FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	k := audioKey{projectID: projectID, ref: ref}
	a, t := s.cache.audio(k)
	if a != nil {
		return a, nil
	}
	all, err := s.prepared()
	if err != nil {
		return nil, fmt.Errorf("find audio %q: %w", ref, err)
	}
	a, err = resolveAudio(ctx, all.reads.audioByID.QueryContext, all.reads.audioByExternalID.QueryContext, projectID, ref)
	if err != nil {
		return nil, fmt.Errorf("find audio %q in project %d: %w", ref, projectID, unavailable(err))
	}
	s.cache.keepAudio(k, t, a)
	return a, nil
}

// UpdateAudio changes a live audio found by reference as FindAudio does. Nil
// fields of u keep the stored values; the merged audio is validated.
//
// A change to title, body or author makes the audio unprocessed again, clears
// its error, bumps its revision and enqueues its synthesis in the same
// transaction; its media keep their keys until the new result is published.
// Other changes do not resynthesise. UpdatedAt moves only if something
// changed. It returns ENOTFOUND if the audio is missing, and EINVALID if the
// new external ID is held by another live audio of the project.
func (s *Store) UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error) {
	return sqlstore.WriteV(ctx, s.Store, fmt.Sprintf("update audio %q", ref), func(t sqlstore.Tx) (*narrator.Audio, error) {
		tx := t.(sqlTx).tx
		cur, err := resolveAudioTx(ctx, tx, projectID, ref)
		if err != nil {
			return nil, fmt.Errorf("update audio %q in project %d: %w", ref, projectID, err)
		}
		got, err := s.updateAudio(ctx, tx, &headMemo{}, cur, u)
		if err != nil {
			return nil, fmt.Errorf("update audio %d: %w", cur.ID, err)
		}
		return got, nil
	})

}

// updateAudio applies u to cur, a live audio with its media loaded
// (sqlstore.UpdateAudio). head is the transaction's memo of the synthesis
// queue's head.
func (s *Store) updateAudio(ctx context.Context, tx *sql.Tx, head *headMemo, cur *narrator.Audio, u narrator.AudioUpdate) (*narrator.Audio, error) {
	return sqlstore.UpdateAudio(ctx, s.Store, sqlTx{tx}, cur, u, func(adds bool) (int64, error) {
		return s.planSynthesis(ctx, tx, head, cur.ProjectID, adds, true)
	})
}

// newestSeqSQL reads the highest number (audios.seq) given in a project,
// deleted audios included, with one probe of the audios_seq index.
const newestSeqSQL = `SELECT coalesce(max(seq), 0) FROM audios WHERE project_id = ?`

// listAudiosPageSQL is the page of a project's live audios that
// ListAudios reads, a range of numbers in the audios_seq index
// (narrator.PageSeqs). listPageMediaSQL reads the media of the same page:
// joined, each audio's columns would be read once per media. The unary
// pluses keep the planner off the indexes on deleted_at and created_at,
// which would read the whole project.
const (
	listAudiosPage = `
	FROM audios
	WHERE project_id = ? AND seq > ? AND seq <= ? AND +deleted_at IS NULL AND +created_at >= ?
	ORDER BY seq DESC`
	listAudiosPageSQL = `SELECT ` + audioColumns + listAudiosPage
	listPageMediaSQL  = `SELECT audio_id, id, content_type, key, bytes FROM media
WHERE audio_id IN (SELECT id ` + listAudiosPage + `)`
)

// ListAudios returns a page of a project's live audios created at or after
// since (the zero time means all), newest first (in the order they were
// added to the project), media included. A page is a range of the
// project's audio numbers (narrator.PageSeqs): it holds at most perPage
// audios, fewer where audios were deleted or since leaves them out. Pages
// start at 1; a page past the end gives an empty slice. perPage must be
// positive. While the database has not changed since a page was read, the
// read cache answers it.
func (s *Store) ListAudios(ctx context.Context, projectID int64, since time.Time, page, perPage int) ([]*narrator.Audio, error) {
	if _, err := narrator.PageOffset(page, perPage); err != nil {
		return nil, err
	}
	var sinceUS int64 = math.MinInt64
	if !since.IsZero() {
		sinceUS = micros(since)
	}
	k := pageKey{projectID: projectID, since: sinceUS, page: page, perPage: perPage}
	cached, t, ok := s.cache.page(k)
	if ok {
		return cached, nil
	}
	all, err := s.prepared()
	if err != nil {
		return nil, fmt.Errorf("list audios: %w", err)
	}
	return sqlstore.ReadV(ctx, s.Store, "list audios", func(stx sqlstore.Tx) ([]*narrator.Audio, error) {
		tx := stx.(sqlTx).tx
		var newest int64
		if err := tx.StmtContext(ctx, all.reads.newestSeq).QueryRowContext(ctx, projectID).Scan(&newest); err != nil {
			return nil, fmt.Errorf("list audios of project %d: %w", projectID, unavailable(err))
		}
		after, upTo, err := narrator.PageSeqs(page, perPage, newest)
		if err != nil {
			return nil, err
		}
		audios := []*narrator.Audio{}
		if upTo > after {
			if audios, err = listPage(ctx, tx, &all.reads, projectID, after, upTo, sinceUS); err != nil {
				return nil, fmt.Errorf("list audios of project %d: %w", projectID, unavailable(err))
			}
		}
		s.cache.keepPage(k, t, audios)
		return audios, nil
	})

}

// listPage reads a page of audios, then the media of the page, in tx.
func listPage(ctx context.Context, tx *sql.Tx, st *readStmts, args ...any) ([]*narrator.Audio, error) {
	rows, err := tx.StmtContext(ctx, st.listAudios).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	audios := []*narrator.Audio{}
	byID := map[int64]*narrator.Audio{}
	for rows.Next() {
		a, err := scanAudio(rows)
		if err != nil {
			return nil, err
		}
		a.Media = make([]narrator.Media, 0, 2)
		audios = append(audios, a)
		byID[a.ID] = a
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if len(audios) == 0 {
		return audios, nil
	}
	if rows, err = tx.StmtContext(ctx, st.listMedia).QueryContext(ctx, args...); err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m narrator.Media
		var key sql.NullString
		if err := rows.Scan(&m.AudioID, &m.ID, &m.ContentType, &key, &m.Bytes); err != nil {
			return nil, err
		}
		m.Key = key.String
		if a := byID[m.AudioID]; a != nil {
			a.Media = append(a.Media, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, a := range audios {
		narrator.SortMedia(a.Media)
	}
	return audios, nil
}
