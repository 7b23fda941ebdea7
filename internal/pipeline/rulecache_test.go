package pipeline_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/speak"
)

// editableRules is a project's rule set that a test can edit.
type editableRules struct {
	mu    sync.Mutex
	rules []narrator.Pronunciation
}

func (r *editableRules) ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*narrator.Pronunciation, len(r.rules))
	for i := range r.rules {
		p := r.rules[i]
		out[i] = &p
	}
	return out, nil
}

func (r *editableRules) set(i int, say string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules[i].Say = say
}

// TestRenderCompilesRulesOnce: renderings with an unchanged rule set
// reuse its compiled matcher; an edit compiles the new set once.
func TestRenderCompilesRulesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	src := &editableRules{rules: []narrator.Pronunciation{{Phrase: "nginx", Say: "engine x"}, {Phrase: "kubectl", Say: "cube control"}}}
	cache := speak.NewRuleCache(0)
	b.pipe = pipeline.New(pipeline.Config{
		Engines:   map[string]pipeline.Synthesizer{narrator.EngineFestival: b.engine, narrator.EngineFlite: b.engine, narrator.EngineEspeak: b.engine},
		Media:     b.media,
		Rules:     src,
		RuleCache: cache,
	})
	t.Cleanup(func() { b.pipe.Close() })
	render := func(want string) {
		t.Helper()
		before := len(b.engine.calls())
		if _, err := b.pipe.Render(t.Context(), &narrator.Audio{Body: "We run nginx."}, b.proj); err != nil {
			t.Fatal(err)
		}
		if calls := b.engine.calls()[before:]; len(calls) != 1 || !strings.Contains(calls[0], want) {
			t.Fatalf("engine got %q, want %q", calls, want)
		}
	}
	for range 4 {
		render("engine x")
	}
	if n := cache.Compiles(); n != 1 {
		t.Errorf("4 renderings with one rule set compiled it %d times, want once", n)
	}
	src.set(0, "engine ex")
	render("engine ex")
	render("engine ex")
	if n := cache.Compiles(); n != 2 {
		t.Errorf("after an edit, %d compilations in all, want 2", n)
	}
}
