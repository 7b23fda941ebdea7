package main

import (
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseBuildInfo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"from a clean checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "a7ca6819271a71d5db1ecc28370f3a349bba1d95"},
			{Key: "vcs.time", Value: "2026-11-23T17:32:12Z"}, {Key: "vcs.modified", Value: "false"}}},
			"narrator (devel)\ncommit:   a7ca6819271a71d5db1ecc28370f3a349bba1d95\ntime:     2026-11-23T17:32:12Z\nmodified: false\ngo:       go1.26.8 PLATFORM\n"},
		{"with local changes", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"narrator (devel)\ncommit:   abc\nmodified: true\ngo:       go1.26.8 PLATFORM\n"},
		{"a tagged module", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			"narrator v1.2.3\ncommit:   unknown\nmodified: false\ngo:       go1.26.8 PLATFORM\n"},
		{"no version", debug.BuildInfo{GoVersion: "go1.26.8"},
			"narrator unknown\ncommit:   unknown\nmodified: false\ngo:       go1.26.8 PLATFORM\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got strings.Builder
			parseBuildInfo(&c.bi).write(&got)
			want := strings.ReplaceAll(c.want, "PLATFORM", runtime.GOOS+"/"+runtime.GOARCH)
			if diff := cmp.Diff(want, got.String()); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	modified := parseBuildInfo(&cases[1].bi).String()
	if want := "(devel) abc (modified) go1.26.8"; modified != want {
		t.Errorf("String() = %q, want %q", modified, want)
	}
}

// TestVersion runs the built binary's `version` and `--version` and checks
// them against what `go version -m` reads from the same binary: the module
// version, the commit and the modified flag (when the build recorded VCS
// information; a build from a checkout does unless -buildvcs=false), and
// the Go version.
func TestVersion(t *testing.T) {
	t.Parallel()
	raw, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := map[string]string{"commit": "unknown", "modified": "false"}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && strings.HasSuffix(f[0], ":"): // "/path/narrator: go1.26.8"
			want["go"] = f[1] + " " + runtime.GOOS + "/" + runtime.GOARCH
		case len(f) >= 3 && f[0] == "mod":
			want["narrator"] = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			want["commit"] = strings.TrimPrefix(f[1], "vcs.revision=")
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.modified="):
			want["modified"] = strings.TrimPrefix(f[1], "vcs.modified=")
		}
	}
	if want["go"] == "" || want["narrator"] == "" {
		t.Fatalf("go version -m printed no Go or module version:\n%s", raw)
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(binary, arg).Output()
		if err != nil {
			t.Fatalf("narrator %s: %v", arg, err)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			k, v, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("narrator %s printed %q", arg, out)
			}
			got[strings.TrimSuffix(k, ":")] = strings.TrimSpace(v)
		}
		delete(got, "time")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("narrator %s (-go version -m +narrator):\n%s", arg, diff)
		}
	}
}
