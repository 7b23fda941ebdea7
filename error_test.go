package narrator_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	for name, mark := range map[string]func(error) error{"Unavailable": narrator.Unavailable, "Contended": narrator.Contended} {
		err := fmt.Errorf("find audio 3: %w", mark(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)))
		if got := narrator.ErrorCode(err); got != narrator.EUNAVAILABLE {
			t.Errorf("%s: ErrorCode = %q, want %q", name, got, narrator.EUNAVAILABLE)
		}
		if msg := narrator.ErrorMessage(err); strings.Contains(msg, "EOF") || msg == "" {
			t.Errorf("%s: ErrorMessage = %q, want a message without the cause", name, msg)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "unexpected EOF") {
			t.Errorf("%s: the cause is lost: %v", name, err)
		}
	}
}

func TestVoiceFailed(t *testing.T) {
	t.Parallel()
	cause := errors.New("onnx run failed: Gather")
	err := fmt.Errorf("synthesize: %w", narrator.VoiceFailed("Tone (Female)", cause))
	if got := narrator.ErrorCode(err); got != narrator.EINVALID {
		t.Errorf("ErrorCode = %q, want %q: nothing tries it again", got, narrator.EINVALID)
	}
	if msg := narrator.ErrorMessage(err); !strings.Contains(msg, "Tone (Female)") || strings.Contains(msg, "Gather") {
		t.Errorf("ErrorMessage = %q, want one naming the voice without the cause", msg)
	}
	if !errors.Is(err, cause) {
		t.Errorf("the cause is lost: %v", err)
	}
}
