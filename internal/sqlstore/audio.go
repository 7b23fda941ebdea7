package sqlstore

import (
	"context"
	"database/sql"
	"errors"
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

const findAudioByIDSQL = `SELECT ` + AudioColumns + ` FROM audios WHERE id = ?`

// findAudioByID returns an audio, deleted or not, without its media; lock
// is "" or DB.ForUpdate.
func findAudioByID(ctx context.Context, tx Tx, id int64, lock string) (*narrator.Audio, error) {
	a, err := ScanAudio(tx.QueryRow(ctx, findAudioByIDSQL+lock, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "audio %s not found", strconv.FormatInt(id, 10))
	}
	return a, err
}
