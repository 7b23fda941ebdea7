package sqlite

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/narrator/narrator/internal/migration"
)

// TestMigrationNumbersAudios checks migration 0016 on audios stored
// before it: each project's audios are numbered from 1 in the list's order
// of before (created_at, then id), deleted ones included, and the unique
// index refuses a number taken twice.
func TestMigrationNumbersAudios(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "n.db")+"?_pragma=foreign_keys(ON)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms, err := migration.Load(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(query string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	var seqMigration string
	for _, m := range ms {
		if m.Version == 16 {
			seqMigration = m.SQL
			break
		}
		exec(m.SQL)
	}
	exec(`INSERT INTO accounts (name, created_at) VALUES ('a', 0)`)
	exec(`INSERT INTO projects (account_id, title, type, language, title_voice, body_voice, created_at)
		VALUES (1, 'p', 'api', 'en_US', 'Mark', 'Sally', 0), (1, 'q', 'api', 'en_US', 'Mark', 'Sally', 0)`)
	// IDs 1 to 5; project 1 created them at 30, 10, 20 and 20 (id 4 after
	// id 3), the second deleted; project 2 one.
	exec(`INSERT INTO audios (project_id, title, body, author, article_url, metadata, state, created_at, updated_at, deleted_at)
		VALUES (1, 't', 'b', '', '', '{}', 'unprocessed', 30, 30, NULL),
		       (1, 't', 'b', '', '', '{}', 'unprocessed', 10, 10, 40),
		       (1, 't', 'b', '', '', '{}', 'unprocessed', 20, 20, NULL),
		       (2, 't', 'b', '', '', '{}', 'unprocessed', 50, 50, NULL),
		       (1, 't', 'b', '', '', '{}', 'unprocessed', 20, 20, NULL)`)
	exec(seqMigration)
	rows, err := db.QueryContext(ctx, `SELECT seq FROM audios ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []int64{4, 1, 2, 1, 3}
	if !slices.Equal(got, want) {
		t.Fatalf("seq by id = %v, want %v", got, want)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO audios (project_id, title, body, author, article_url, metadata, state, created_at, updated_at, seq)
		VALUES (1, 't', 'b', '', '', '{}', 'unprocessed', 60, 60, 4)`); err == nil {
		t.Error("a second audio numbered 4 in project 1 was accepted")
	}
}
