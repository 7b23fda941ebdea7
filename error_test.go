package narrator_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

func TestBodyError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"deadline", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, narrator.ETIMEOUT},
		{"closed", io.ErrUnexpectedEOF, narrator.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := narrator.BodyError(tc.err)
			if got := narrator.ErrorCode(err); got != tc.want {
				t.Errorf("ErrorCode = %q, want %q", got, tc.want)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v does not wrap %v", err, tc.err)
			}
		})
	}
}

func TestClientGone(t *testing.T) {
	t.Parallel()
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	canceled := fmt.Errorf("authorize project 1: %w", context.Canceled)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"cancelled under an ended request", ended, canceled, narrator.ETIMEOUT},
		{"cancelled, request live", t.Context(), canceled, narrator.EINTERNAL},
		{"other error, request ended", ended, errors.New("disk on fire"), narrator.EINTERNAL},
		{"client's error, request ended", ended, narrator.Errorf(narrator.EINVALID, "bad"), narrator.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := narrator.ErrorCode(narrator.ClientGone(tc.ctx, tc.err)); got != tc.want {
				t.Errorf("ErrorCode = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSentence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"title is required", "Title is required."},
		{" Already one. ", "Already one."},
		{"é is kept", "É is kept."},
	} {
		if got := narrator.Sentence(tt.in); got != tt.want {
			t.Errorf("Sentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
