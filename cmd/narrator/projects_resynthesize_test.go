package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// TestProjectsResynthesize queues the resynthesis of every audio of a
// project with `narrator projects resynthesize`, once at a time, and
// checks its refusals.
func TestProjectsResynthesize(t *testing.T) {
	t.Parallel()
	data, _, proj := fixture(t)
	id := fmt.Sprint(proj.ID)
	st, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	out := mustJSON[projectResynthesisOut](t, mustCLI(t, "projects", "resynthesize", "--data", data, id))
	if want := (projectResynthesisOut{ProjectID: proj.ID, Resynthesis: "queued", AudioCount: 0}); out != want {
		t.Errorf("projects resynthesize printed %+v, want %+v", out, want)
	}
	if queued := sqlitetest.QueuedResyntheses(t, st.DB()); len(queued) != 1 || queued[0] != (narrator.ResynthesisJob{ProjectID: proj.ID, All: true}) {
		t.Errorf("queued resyntheses %+v, want one of every audio of project %d", queued, proj.ID)
	}

	for _, tc := range []struct {
		args  []string
		usage bool
		says  string
	}{
		// The first is still queued: no server works it.
		{[]string{"projects", "resynthesize", "--data", data, id}, false, "already under way"},
		{[]string{"pronunciations", "add", "--data", data, "--project", id, "--phrase", "x", "--say", "ex", "--resynthesize"}, false, "already under way"},
		{[]string{"projects", "resynthesize", "--data", data, "999"}, false, "project 999 does not exist"},
		{[]string{"projects", "resynthesize", "--data", data, "first"}, true, "give one project ID"},
		{[]string{"projects", "resynthesize", "--data", data}, true, "give one project ID"},
		{[]string{"projects", "resynthesize", "--data", data, id, id}, true, "give one project ID"},
	} {
		_, _, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.says) || (exitCode(err) == 2) != tc.usage {
			t.Errorf("narrator %s: %v (exit %d), want an error saying %q, a usage error: %v", strings.Join(tc.args, " "), err, exitCode(err), tc.says, tc.usage)
		}
	}
}
