package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The reads for the player are sqlstore's, but for FindAudioByArticleURL,
// whose index is this dialect's: on the URL itself.

// findAudioByArticleURLSQL reads the audios_article_url index, in its
// order. INDEXED BY keeps the planner, which has no statistics, from
// scanning the project's list index instead.
const findAudioByArticleURLSQL = `SELECT ` + audioColumns + `
FROM audios INDEXED BY audios_article_url
WHERE project_id = ? AND article_url = ? AND deleted_at IS NULL AND article_url <> ''
ORDER BY created_at DESC, id DESC
LIMIT 1`

// FindAudioByArticleURL returns the newest live audio of a project whose
// article URL is articleURL, media included. It returns ENOTFOUND if there
// is none.
func (s *Store) FindAudioByArticleURL(ctx context.Context, projectID int64, articleURL string) (*narrator.Audio, error) {
	return sqlstore.ReadV(ctx, s.Store, "find audio by article url", func(tx sqlstore.Tx) (*narrator.Audio, error) {
		a, err := scanAudio(tx.(sqlTx).tx.QueryRowContext(ctx, findAudioByArticleURLSQL, projectID, articleURL))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, narrator.Errorf(narrator.ENOTFOUND, "no audio of project %d has article URL %q", projectID, articleURL)
		}
		if err != nil {
			return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
		}
		if err := sqlstore.LoadMedia(ctx, dialect{s}, tx, a); err != nil {
			return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
		}
		return a, nil
	})

}
