package migration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"m/0002_two.sql":   {Data: []byte("two")},
		"m/0010_ten.sql":   {Data: []byte("ten")},
		"m/0001_one.sql":   {Data: []byte("one")},
		"m/README.md":      {Data: []byte("not a migration")},
		"other/0003_x.sql": {Data: []byte("elsewhere")},
	}
	got, err := Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{1, "0001_one.sql", "one"}, {2, "0002_two.sql", "two"}, {10, "0010_ten.sql", "ten"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no number":     {"m/init.sql": {}},
		"zero":          {"m/0000_init.sql": {}},
		"same version":  {"m/0001_a.sql": {}, "m/1_b.sql": {}},
		"no underscore": {"m/0001.sql": {}},
		"negative":      {"m/-1_x.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
	}
}

func TestCurrent(t *testing.T) {
	t.Parallel()
	ms := []Migration{{Version: 1}, {Version: 2}}
	for _, tc := range []struct {
		name    string
		applied []int
		want    bool
		err     string
	}{
		{"none", nil, false, ""},
		{"some", []int{1}, false, ""},
		{"all", []int{1, 2}, true, ""},
		{"newer binary", []int{1, 2, 3}, false, "migration 3"},
	} {
		got, err := Current(ms, tc.applied)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Current = %v, %v; want %v, error containing %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// sharedNumbers is the first version numbered once for both stores: from
// it on, a change has the same number in every dialect, and a dialect that
// does not need it leaves a gap. Before it, the stores numbered their
// migrations apart (sqlite's 0010_quota.sql is postgres's 0007_quota.sql).
const sharedNumbers = 12

// TestOneNumberPerChange checks the stores' embedded migrations from
// sharedNumbers on: a change (its name after the number) has one number in
// both dialects, and one number names one change.
func TestOneNumberPerChange(t *testing.T) {
	t.Parallel()
	byDialect := map[string][]Migration{}
	for _, dialect := range []string{"sqlite", "postgres"} {
		ms, err := Load(os.DirFS(filepath.Join("..", dialect)), "migrations")
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			t.Fatalf("no %s migrations", dialect)
		}
		byDialect[dialect] = ms
	}
	if err := oneNumberPerChange(byDialect, sharedNumbers); err != nil {
		t.Error(err)
	}
	bad := map[string][]Migration{
		"sqlite":   {{Version: 12, Name: "0012_quota.sql"}},
		"postgres": {{Version: 13, Name: "0013_quota.sql"}},
	}
	if err := oneNumberPerChange(bad, sharedNumbers); err == nil {
		t.Error("one change numbered 12 and 13 passed")
	}
	bad["postgres"] = []Migration{{Version: 12, Name: "0012_feeds.sql"}}
	if err := oneNumberPerChange(bad, sharedNumbers); err == nil {
		t.Error("number 12 for two changes passed")
	}
}

// oneNumberPerChange returns an error if, among the migrations numbered
// from on, a change has two numbers or a number two changes.
func oneNumberPerChange(byDialect map[string][]Migration, from int) error {
	versionOf, nameOf := map[string]int{}, map[int]string{}
	for dialect, ms := range byDialect {
		for _, m := range ms {
			if m.Version < from {
				continue
			}
			_, change, _ := strings.Cut(m.Name, "_")
			if v, ok := versionOf[change]; ok && v != m.Version {
				return fmt.Errorf("%s: %s is change %q, which another dialect numbers %d", dialect, m.Name, change, v)
			}
			if c, ok := nameOf[m.Version]; ok && c != change {
				return fmt.Errorf("%s: %s has number %d, which another dialect gives change %q", dialect, m.Name, m.Version, c)
			}
			versionOf[change], nameOf[m.Version] = m.Version, change
		}
	}
	return nil
}
