package standin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/standin"
)

func TestSynthesize(t *testing.T) {
	t.Parallel()
	e := standin.New(20 * time.Millisecond)
	start := time.Now()
	pcm, rate, err := e.Synthesize(t.Context(), "any", "three short words", 1)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Errorf("took %v, want at least the stand-in's 20ms", took)
	}
	if rate != standin.Rate || len(pcm) != 3*standin.Rate/3 {
		t.Errorf("got %d samples at %d Hz, want %d at %d", len(pcm), rate, standin.Rate, standin.Rate)
	}
}

func TestSynthesizeCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := standin.New(time.Hour).Synthesize(ctx, "any", "words", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
