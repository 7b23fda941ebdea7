package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlite"
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
	var args []string
	rows, err := st.DB().QueryContext(t.Context(), `SELECT json(args) FROM river_job WHERE kind = ?`, narrator.ResynthesisJob{}.JobKind())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		args = append(args, a)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var job struct {
		ProjectID int64 `json:"project_id"`
		All       bool  `json:"all"`
	}
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &job) != nil || job.ProjectID != proj.ID || !job.All {
		t.Errorf("queued jobs %v, want one for every audio of project %d", args, proj.ID)
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
