// Package migration reads a store's embedded schema migrations, files named
// NNNN_name.sql, and compares them with the versions a database has
// applied. Each store applies them in its own dialect, one transaction
// each, recording them in its schema_migrations table.
//
// From 0012 on, a change has one number in both dialects, and a dialect
// that does not need it leaves a gap, which Load and Current accept
// (TestOneNumberPerChange); before, the stores numbered theirs apart. The
// store suite's TestSchema compares both migrated schemas with one file,
// internal/storetest/testdata/schema.golden.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one migration file.
type Migration struct {
	Version int    // the file's number, from 1
	Name    string // the file's name, such as 0001_init.sql
	SQL     string
}

// Load returns the migrations in dir of fsys, every file named *.sql, in
// version order. Names must start with a positive number and "_", and no
// two may share a number.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s have the same version", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// Current reports whether every migration of ms is among the applied
// versions. It returns an error if a version was applied that ms does not
// have: a newer binary migrated the database, and this one must not run on
// it.
func Current(ms []Migration, applied []int) (bool, error) {
	known := map[int]bool{}
	for _, m := range ms {
		known[m.Version] = true
	}
	done := map[int]bool{}
	for _, v := range applied {
		if !known[v] {
			return false, fmt.Errorf("database schema has migration %d, which this binary does not know; upgrade narrator", v)
		}
		done[v] = true
	}
	for _, m := range ms {
		if !done[m.Version] {
			return false, nil
		}
	}
	return true, nil
}
