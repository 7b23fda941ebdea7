package jobs_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
)

// TestUpdatesSupersedeQueuedSynthesis: many changes to one unprocessed
// audio leave one synthesis job waiting, for its latest revision; a job
// already running is left alone.
func TestUpdatesSupersedeQueuedSynthesis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for i := range 200 {
			body := fmt.Sprintf("Hello, number %d.", i)
			if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
				t.Fatal(err)
			}
		}
		var waiting []jobRow
		for _, j := range b.river.jobs(t) {
			if j.Kind == (narrator.SynthesizeJob{}).JobKind() {
				waiting = append(waiting, j)
			}
		}
		if len(waiting) != 1 {
			t.Fatalf("%d synthesis jobs after 200 updates, want 1", len(waiting))
		}
		var args jobs.SynthesizeArgs
		if err := json.Unmarshal(waiting[0].Args, &args); err != nil {
			t.Fatal(err)
		}
		if want := b.find(t).Revision; args.Revision != want || args.AudioID != b.audio.ID {
			t.Errorf("the job's args %+v, want the audio's latest revision %d", args, want)
		}
		// A running job stays: the next update adds one beside it.
		if n := b.river.markRunning(t); n != 1 {
			t.Fatalf("%d jobs marked running, want 1", n)
		}
		body := "Once more."
		if _, err := b.store.UpdateAudio(ctx, b.audio.ProjectID, "a", narrator.AudioUpdate{Body: &body}); err != nil {
			t.Fatal(err)
		}
		states := map[string]int{}
		for _, j := range b.river.jobs(t) {
			if j.Kind == (narrator.SynthesizeJob{}).JobKind() {
				states[j.State]++
			}
		}
		if states["running"] != 1 || states["available"] != 1 {
			t.Errorf("synthesis jobs by state %v, want one running and one available", states)
		}
	})
}
