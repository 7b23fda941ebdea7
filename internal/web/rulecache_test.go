package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/speak"
	"github.com/narrator/narrator/internal/web"
)

// TestAudioPageCompilesRulesOnce: an audio page shows the spoken text
// read with the project's pronunciation rules; views of an unchanged rule
// set reuse its compiled matcher, and an edit compiles the new set once.
func TestAudioPageCompilesRulesOnce(t *testing.T) {
	t.Parallel()
	rules := speak.NewRuleCache(0)
	b := setup(t, func(d *web.Deps) { d.RuleCache = rules })
	ctx := t.Context()
	for i := range 300 {
		if err := b.store.SetPronunciation(ctx, &narrator.Pronunciation{ProjectID: b.project.ID, Phrase: fmt.Sprint("word", i), Say: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	rule := &narrator.Pronunciation{ProjectID: b.project.ID, Phrase: "nginx", Say: "engine x"}
	if err := b.store.SetPronunciation(ctx, rule); err != nil {
		t.Fatal(err)
	}
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Servers", Body: "We run nginx in production."}
	b.mustAudios(t, a)
	c, _ := b.signedIn(t)
	path := fmt.Sprintf("/projects/%d/audios/%d", b.project.ID, a.ID)
	view := func(want string) {
		t.Helper()
		res := c.get(path)
		wantStatus(t, res, http.StatusOK)
		if !strings.Contains(res.body, want) {
			t.Fatalf("the audio page does not show %q", want)
		}
	}
	for range 5 {
		view("engine x")
	}
	if n := rules.Compiles(); n != 1 {
		t.Errorf("5 views of one rule set compiled it %d times, want once", n)
	}
	rule.Say = "engine ex"
	if err := b.store.SetPronunciation(ctx, rule); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		view("engine ex")
	}
	if n := rules.Compiles(); n != 2 {
		t.Errorf("after an edit, %d compilations in all, want 2", n)
	}
}
