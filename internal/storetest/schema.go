package storetest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite internal/storetest/testdata/schema.golden")

// Column is a column of a store's logical schema.
type Column struct {
	Name string
	// Type is the logical type, whatever the dialect stores it as: int,
	// text, bytes, bool, time (an instant), date (a day), json or list (of
	// text).
	Type     string
	Nullable bool
}

// Index is an index of a store's logical schema, or a unique constraint.
type Index struct {
	// Name is the index's, or "" for a unique constraint or primary key,
	// whose names each dialect makes up.
	Name string
	// Columns are the indexed columns, or expressions as "expr(...)" with
	// what they apply to, in order; the direction of each is left out.
	Columns []string
	Unique  bool
	Primary bool
	// Partial is set when the index covers only rows that match a WHERE
	// clause.
	Partial bool
}

// Table is a table of a store's logical schema.
type Table struct {
	Name    string
	Columns []Column
	Indexes []Index
}

// Schema is a store's logical schema: its tables, with their columns and
// indexes, leaving out the queue's (river_*) and the migrations' own. Both
// stores must have the same one, the one testdata/schema.golden holds.
type Schema []Table

// String writes the schema one line a fact, each line naming its table:
// tables by name, then their columns by name and their indexes by text.
func (s Schema) String() string {
	tables := slices.Clone(s)
	slices.SortFunc(tables, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "%s: table\n", t.Name)
		cols := slices.Clone(t.Columns)
		slices.SortFunc(cols, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
		for _, c := range cols {
			null := "not null"
			if c.Nullable {
				null = "null"
			}
			fmt.Fprintf(&b, "%s: column %s %s %s\n", t.Name, c.Name, c.Type, null)
		}
		var idx []string
		for _, i := range t.Indexes {
			kind := "index " + i.Name
			switch {
			case i.Primary:
				kind = "primary key"
			case i.Name == "":
				kind = "unique"
			case i.Unique:
				kind = "unique index " + i.Name
			}
			line := fmt.Sprintf("%s: %s (%s)", t.Name, kind, strings.Join(i.Columns, ", "))
			if i.Partial {
				line += " partial"
			}
			idx = append(idx, line+"\n")
		}
		slices.Sort(idx)
		b.WriteString(strings.Join(idx, ""))
	}
	return b.String()
}

// CheckSchema fails unless s, the schema of the store of the given dialect
// ("sqlite" or "postgres"), is the one testdata/schema.golden gives it. The
// file holds one line a fact: "both: " and the fact for what both stores
// have, or the dialect's name for what only one has, an index tuned for its
// planner, so that every difference is written down and reviewed, and any
// other fails. With -update the test rewrites the file from s and the other
// dialect's lines as they stand; run it for both stores. Each store's test
// reads its database's catalog into s, mapping its types to the logical
// ones.
func CheckSchema(t *testing.T, dialect string, s Schema) {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no path of storetest")
	}
	golden := filepath.Join(filepath.Dir(file), "testdata", "schema.golden")
	got := strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n")
	raw, err := os.ReadFile(golden)
	if err != nil && !(*update && errors.Is(err, fs.ErrNotExist)) {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	mine, other := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		tag, fact, ok := strings.Cut(line, ": ")
		switch {
		case !ok:
		case tag == "both":
			mine[fact], other[fact] = true, true
		case tag == dialect:
			mine[fact] = true
		default:
			other[fact] = true
		}
	}
	if *update {
		var out []string
		for _, fact := range got {
			tag := dialect
			if other[fact] {
				tag = "both"
			}
			out = append(out, tag+": "+fact)
		}
		otherName := "postgres"
		if dialect == otherName {
			otherName = "sqlite"
		}
		for fact := range other {
			if !slices.Contains(got, fact) {
				out = append(out, otherName+": "+fact)
			}
		}
		slices.SortFunc(out, func(a, b string) int {
			_, fa, _ := strings.Cut(a, ": ")
			_, fb, _ := strings.Cut(b, ": ")
			return strings.Compare(fa, fb)
		})
		if err := os.WriteFile(golden, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var diff strings.Builder
	for fact := range mine {
		if !slices.Contains(got, fact) {
			fmt.Fprintf(&diff, "-%s\n", fact)
		}
	}
	for _, fact := range got {
		if !mine[fact] {
			fmt.Fprintf(&diff, "+%s\n", fact)
		}
	}
	if diff.Len() > 0 {
		t.Errorf("the %s schema differs from %s (-want +got):\n%s"+
			"after a migration in both dialects: go test -p 1 ./internal/sqlite ./internal/postgres -run TestSchema -update",
			dialect, golden, diff.String())
	}
}
