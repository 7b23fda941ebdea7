package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// killChildEnv names the database a child process of TestCreatesSurviveKill
// creates audios in.
const killChildEnv = "NARRATOR_TEST_KILL_CHILD_DB"

// TestCreatesSurviveKill runs creates from many goroutines in a child
// process, which prints the ID of each create as it is acknowledged, and
// kills it with SIGKILL mid-stream. Every acknowledged create must then be
// stored with its job: a create is answered only after its group's commit.
func TestCreatesSurviveKill(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		createUntilKilled(t, path)
		return
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "narrator.db")
	s := mustOpenPath(t, path, Options{})
	if _, err := s.DB().ExecContext(t.Context(), `CREATE TABLE test_jobs (id INTEGER PRIMARY KEY, job TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	acc := &narrator.Account{Name: "Acme"}
	if err := s.CreateAccount(t.Context(), acc); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := s.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCreatesSurviveKill$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []int64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		id, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			continue // the test framework's own output
		}
		acked = append(acked, id)
		if len(acked) == 500 {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child was not killed")
	}
	if len(acked) < 500 {
		t.Fatalf("the child acknowledged %d creates before it ended, want 500", len(acked))
	}

	jobs := map[string]bool{}
	rows, err := s.DB().QueryContext(t.Context(), `SELECT job FROM test_jobs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var j string
		if err := rows.Scan(&j); err != nil {
			t.Fatal(err)
		}
		jobs[j] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range acked {
		if _, err := s.FindAudio(t.Context(), p.ID, strconv.FormatInt(id, 10)); err != nil {
			t.Errorf("acknowledged audio %d: %v", id, err)
		}
		if row, _ := storetest.JobRow(narrator.SynthesizeJob{AudioID: id, Revision: 1}); !jobs[row] {
			t.Errorf("acknowledged audio %d has no job", id)
		}
	}
	t.Logf("%d creates acknowledged before SIGKILL, all stored with their jobs", len(acked))
}

// createUntilKilled is the child: it creates audios from 16 goroutines until
// it is killed, printing each acknowledged ID on a line of its own.
func createUntilKilled(t *testing.T, path string) {
	s := mustOpenPath(t, path, withJobs(tableJobs{recorderJobs{&storetest.Recorder{}}}))
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				a := &narrator.Audio{ProjectID: 1, Title: "Title", Body: "A body.", ExternalID: fmt.Sprintf("w%d-%d", w, i)}
				if _, err := s.CreateAudio(context.Background(), a); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fmt.Fprintln(out, a.ID)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
