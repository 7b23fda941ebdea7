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
	err := fmt.Errorf("find audio 3: %w", narrator.Unavailable(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)))
	if got := narrator.ErrorCode(err); got != narrator.EUNAVAILABLE {
		t.Errorf("ErrorCode = %q, want %q", got, narrator.EUNAVAILABLE)
	}
	if msg := narrator.ErrorMessage(err); strings.Contains(msg, "EOF") || msg == "" {
		t.Errorf("ErrorMessage = %q, want a message without the cause", msg)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("the cause is lost: %v", err)
	}
}
