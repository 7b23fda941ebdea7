package narrator_test

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestPlanLease(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	live := narrator.Audio{Revision: 2}
	for _, tc := range []struct {
		name  string
		audio narrator.Audio
		cur   narrator.SynthesisLease
		rev   int
		want  bool
	}{
		{"free", live, narrator.SynthesisLease{}, 2, true},
		{"held by another", live, narrator.SynthesisLease{Holder: "b", Revision: 2, Until: now.Add(time.Second)}, 2, false},
		{"renewed by its holder", live, narrator.SynthesisLease{Holder: "a", Revision: 2, Until: now.Add(time.Second)}, 2, true},
		{"ran out", live, narrator.SynthesisLease{Holder: "b", Revision: 2, Until: now}, 2, true},
		{"older revision's lease", live, narrator.SynthesisLease{Holder: "b", Revision: 1, Until: now.Add(time.Hour)}, 2, true},
		{"other revision", live, narrator.SynthesisLease{}, 1, false},
		{"deleted", narrator.Audio{Revision: 2, Deleted: true}, narrator.SynthesisLease{}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := narrator.PlanLease(&tc.audio, tc.cur, "a", tc.rev, now); got != tc.want {
				t.Errorf("PlanLease = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAwaitsRevision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		audio narrator.Audio
		want  bool
	}{
		{"awaits it", narrator.Audio{Revision: 2, State: narrator.StateUnprocessed}, true},
		{"other revision", narrator.Audio{Revision: 3, State: narrator.StateUnprocessed}, false},
		{"processed", narrator.Audio{Revision: 2, State: narrator.StateProcessed}, false},
		{"deleted", narrator.Audio{Revision: 2, State: narrator.StateUnprocessed, Deleted: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.audio.AwaitsRevision(2); got != tc.want {
				t.Errorf("AwaitsRevision(2) = %v, want %v", got, tc.want)
			}
		})
	}
}
