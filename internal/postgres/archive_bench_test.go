package postgres_test

import (
	"testing"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

// archiveFillSQL adds audios (processed, with both media) to a project, as
// doc.go tells a bulk load. Arguments: the first and last sequence number
// and the project.
const archiveFillSQL = `
WITH added AS (
	INSERT INTO audios (project_id, external_id, title, body, author, article_url, state, created_at, updated_at, seq)
	SELECT $3, 'bulk-' || g, 'Title ' || g, 'Body of article ' || g || '.', '', '', 'processed',
		timestamptz '2020-01-01' + g * interval '1 second', timestamptz '2020-01-01' + g * interval '1 second', g
	FROM generate_series($1::bigint, $2::bigint) g
	RETURNING id
), media AS (
	INSERT INTO media (audio_id, content_type, key)
	SELECT id, t, 'tok' || id || '/audio.' || t FROM added, unnest(ARRAY['mp3', 'm3u8']) t
)
UPDATE projects SET audio_count = audio_count + ($2::bigint - $1::bigint + 1) WHERE id = $3`

// BenchmarkArchive runs storetest.BenchArchive: the reads behind the API's
// requests on a project of 10^3, 10^5 and (with NARRATOR_BENCH_ARCHIVE=1e6)
// 10^6 audios.
func BenchmarkArchive(b *testing.B) {
	s := mustOpen(b, pgtest.NewDatabase(b, migrated), postgres.Options{})
	storetest.BenchArchive(b, s, func(b *testing.B, projectID int64, first, last int) {
		ctx := b.Context()
		if _, err := s.Pool().Exec(ctx, archiveFillSQL, first, last, projectID); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Pool().Exec(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	})
}
