package sqlite

import (
	"context"
	"database/sql"

	"github.com/narrator/narrator"
)

// queryAudios runs a query that selects audioColumns and loads the media
// of the audios it returns.
func queryAudios(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]*narrator.Audio, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	audios := []*narrator.Audio{}
	for rows.Next() {
		a, err := scanAudio(rows)
		if err != nil {
			return nil, err
		}
		audios = append(audios, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := loadMedia(ctx, tx, audios...); err != nil {
		return nil, err
	}
	return audios, nil
}
