package sqlite

import (
	"testing"
	"time"

	"github.com/narrator/narrator/internal/storetest"
)

// archiveFillSQL adds audios (processed, with both media) to a project, as
// doc.go tells a bulk load: rows in audios (numbered from 1 in the
// project, seq) and media, and the project's audio_count. Arguments: the first and last sequence number, the project,
// and the base creation time in microseconds.
const archiveFillSQL = `
WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
INSERT INTO audios (project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, seq)
SELECT ?3, 'bulk-' || i, 'Title ' || i, 'Body of article ' || i || '.', '', '', '{}',
	'processed', '', 1, 60000, ?4 + i * 1000000, ?4 + i * 1000000, i
FROM n;
INSERT INTO media (audio_id, content_type, key)
SELECT id, 'mp3', 'tok' || id || '/audio.mp3' FROM audios a WHERE project_id = ?3
	AND NOT EXISTS (SELECT 1 FROM media m WHERE m.audio_id = a.id AND m.content_type = 'mp3');
INSERT INTO media (audio_id, content_type, key)
SELECT id, 'm3u8', 'tok' || id || '/audio.m3u8' FROM audios a WHERE project_id = ?3
	AND NOT EXISTS (SELECT 1 FROM media m WHERE m.audio_id = a.id AND m.content_type = 'm3u8');
UPDATE projects SET audio_count = audio_count + (?2 - ?1 + 1) WHERE id = ?3;
ANALYZE;`

// BenchmarkArchive runs storetest.BenchArchive: the reads behind the API's
// requests on a project of 10^3, 10^5 and (with NARRATOR_BENCH_ARCHIVE=1e6)
// 10^6 audios.
func BenchmarkArchive(b *testing.B) {
	s := mustOpen(b, withJobs(recorderJobs{&storetest.Recorder{}}))
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	storetest.BenchArchive(b, s, func(b *testing.B, projectID int64, first, last int) {
		if _, err := s.writer.ExecContext(b.Context(), archiveFillSQL, first, last, projectID, base); err != nil {
			b.Fatal(err)
		}
	})
}
