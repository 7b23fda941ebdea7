package narrator_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestPlanCreate(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	in := narrator.Audio{ID: 7, ProjectID: 3, ExternalID: "e", Title: "T", Body: "B", State: narrator.StateFailed, Error: "x",
		Revision: 9, DurationMS: 5, Deleted: true, Media: []narrator.Media{{ID: 1}}}
	want := narrator.Audio{ProjectID: 3, ExternalID: "e", Title: "T", Body: "B", Metadata: map[string]string{},
		State: narrator.StateUnprocessed, Revision: 1, CreatedAt: now, UpdatedAt: now}
	if diff := cmp.Diff(want, narrator.PlanCreate(&in, now)); diff != "" {
		t.Errorf("PlanCreate (-want +got):\n%s", diff)
	}
	in.Metadata = map[string]string{"k": "v"}
	got := narrator.PlanCreate(&in, now)
	got.Metadata["k"] = "changed"
	if in.Metadata["k"] != "v" {
		t.Error("PlanCreate shares the input's metadata map")
	}
}

func TestPlanFail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		audio    narrator.Audio
		revision int
		want     bool
	}{
		{"unprocessed", narrator.Audio{State: narrator.StateUnprocessed, Revision: 2}, 2, true},
		{"failed again", narrator.Audio{State: narrator.StateFailed, Revision: 2}, 2, true},
		{"processed", narrator.Audio{State: narrator.StateProcessed, Revision: 2}, 2, false},
		{"other revision", narrator.Audio{State: narrator.StateUnprocessed, Revision: 3}, 2, false},
		{"deleted", narrator.Audio{State: narrator.StateUnprocessed, Revision: 2, Deleted: true}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := narrator.PlanFail(&tc.audio, tc.revision); got != tc.want {
				t.Errorf("PlanFail = %v, want %v", got, tc.want)
			}
		})
	}
}
