package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// The reads for the player are sqlstore's, but for FindAudioByArticleURL,
// whose index is this dialect's: on the URL's MD5, since a URL may be
// longer than a B-tree entry.

// findAudioByArticleURLSQL reads the audios_article_url index, on a hash
// of the URL; the URL itself is compared too.
const findAudioByArticleURLSQL = `SELECT ` + audioColumns + `
FROM audios
WHERE project_id = $1 AND md5(article_url) = md5($2) AND article_url = $2
	AND deleted_at IS NULL AND article_url <> ''
ORDER BY created_at DESC, id DESC
LIMIT 1`

// FindAudioByArticleURL returns the newest live audio of a project whose
// article URL is articleURL, media included. It returns ENOTFOUND if there
// is none.
func (s *Store) FindAudioByArticleURL(ctx context.Context, projectID int64, articleURL string) (*narrator.Audio, error) {
	notFound := narrator.Errorf(narrator.ENOTFOUND, "no audio of project %d has article URL %q", projectID, articleURL)
	if !narrator.ValidText(articleURL) {
		return nil, notFound
	}
	return sqlstore.ReadV(ctx, s.Store, "find audio by article url", func(stx sqlstore.Tx) (*narrator.Audio, error) {
		tx := stx.(pgTx).tx
		a, err := scanAudio(tx.QueryRow(ctx, findAudioByArticleURLSQL, projectID, articleURL))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound
		}
		if err != nil {
			return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
		}
		if err := s.loadMedia(ctx, tx, a); err != nil {
			return nil, fmt.Errorf("find audio by article url in project %d: %w", projectID, err)
		}
		return a, nil
	})

}
