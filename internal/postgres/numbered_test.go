package postgres_test

import (
	"testing"

	"github.com/narrator/narrator/internal/postgres"
)

func TestNumbered(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"SELECT 1":                               "SELECT 1",
		"WHERE a = ? AND b IN (?, ?)":            "WHERE a = $1 AND b IN ($2, $3)",
		"INSERT INTO t (a, b) VALUES (?, ?)\n--": "INSERT INTO t (a, b) VALUES ($1, $2)\n--",
	} {
		if got := postgres.Numbered(in); got != want {
			t.Errorf("Numbered(%q) = %q, want %q", in, got, want)
		}
	}
}
