package migration

import (
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
