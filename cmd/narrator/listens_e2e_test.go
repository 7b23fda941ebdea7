//go:build e2e

package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/sqlite"
)

// TestListensSurviveStop: listening events are counted in memory, and a
// graceful stop writes them before the database closes.
func TestListensSurviveStop(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	s := startServer(t, data, freeAddr(t), "--role", "api")
	a, err := s.client(t, acct.APIKey).CreateAudio(t.Context(), proj.ID, client.NewAudio{Body: "Heard.", ExternalID: "l"})
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, proj.ID, a.ID)
	for range 3 {
		res, err := http.Post(s.base+"/embed/events", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("event: %d", res.StatusCode)
		}
	}
	s.stop(t, syscall.SIGTERM)

	db, err := sqlite.OpenDB(t.Context(), filepath.Join(data, "narrator.db"), 1)
	if err != nil {
		t.Fatal(err)
	}
	st := sqlite.New(db, sqlite.Options{})
	defer st.Close()
	counts, err := st.AudioListens(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts.Plays != 3 {
		t.Errorf("%d plays after a graceful stop, want 3", counts.Plays)
	}
}
