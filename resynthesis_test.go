package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

// TestResynthesisJobNeeds: the phrase form re-queues the live, processed
// or failed audios that contain the phrase; the form for every audio all
// live ones not already waiting for synthesis.
func TestResynthesisJobNeeds(t *testing.T) {
	t.Parallel()
	audio := func(state, body string, deleted bool) *narrator.Audio {
		return &narrator.Audio{ProjectID: 1, State: state, Title: "News", Body: body, Deleted: deleted}
	}
	phrase := narrator.ResynthesisJob{ProjectID: 1, Phrase: "nginx"}
	all := narrator.ResynthesisJob{ProjectID: 1, All: true}
	for _, tc := range []struct {
		name      string
		a         *narrator.Audio
		phrase    bool
		allAudios bool
	}{
		{"processed with the phrase", audio(narrator.StateProcessed, "We use NGINX.", false), true, true},
		{"processed without it", audio(narrator.StateProcessed, "Nothing here.", false), false, true},
		{"failed without it", audio(narrator.StateFailed, "Nothing here.", false), false, true},
		{"failed with it", audio(narrator.StateFailed, "nginx", false), true, true},
		{"waiting for synthesis", audio(narrator.StateUnprocessed, "nginx", false), false, false},
		{"deleted", audio(narrator.StateProcessed, "nginx", true), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := phrase.Needs(tc.a); got != tc.phrase {
				t.Errorf("phrase form: Needs = %v, want %v", got, tc.phrase)
			}
			if got := all.Needs(tc.a); got != tc.allAudios {
				t.Errorf("every audio: Needs = %v, want %v", got, tc.allAudios)
			}
			// All wins over a phrase left in the job.
			withPhrase := all
			withPhrase.Phrase = "absent"
			if got := withPhrase.Needs(tc.a); got != tc.allAudios {
				t.Errorf("every audio with a phrase: Needs = %v, want %v", got, tc.allAudios)
			}
		})
	}
}
