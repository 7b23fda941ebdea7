package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
)

// deleterFunc is a store's DeleteAudio.
type deleterFunc func(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)

func (f deleterFunc) DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	return f(ctx, projectID, ref)
}

// prefixDeleter records the prefixes it deletes, and fails with err.
type prefixDeleter struct {
	mu      sync.Mutex
	deleted []string
	err     error
}

func (d *prefixDeleter) DeletePrefix(_ context.Context, prefix string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted = append(d.deleted, prefix)
	return d.err
}

func TestPurgeOnDelete(t *testing.T) {
	t.Parallel()
	audio := &narrator.Audio{ID: 7, Deleted: true, Media: []narrator.Media{
		{ContentType: narrator.ContentTypeMP3, Key: "tok1/audio.mp3"},
		{ContentType: narrator.ContentTypeM3U8, Key: "tok1/audio.m3u8"},
	}}
	store := deleterFunc(func(_ context.Context, projectID int64, ref string) (*narrator.Audio, error) {
		if ref != "ext-7" {
			return nil, narrator.Errorf(narrator.ENOTFOUND, "audio %q not found", ref)
		}
		return audio, nil
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	media := &prefixDeleter{}
	p := jobs.NewPurgeOnDelete(store, media, logger)
	got, err := p.DeleteAudio(t.Context(), 1, "ext-7")
	if err != nil || got != audio {
		t.Fatalf("DeleteAudio = %v, %v", got, err)
	}
	if want := []string{"tok1/"}; !slices.Equal(media.deleted, want) {
		t.Errorf("deleted %v, want %v", media.deleted, want)
	}

	// A failed delete purges nothing.
	media.deleted = nil
	if _, err := p.DeleteAudio(t.Context(), 1, "missing"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("missing audio: %v, want ENOTFOUND", err)
	}
	if len(media.deleted) != 0 {
		t.Errorf("deleted %v after a failed delete", media.deleted)
	}

	// A failed purge still answers the delete, and is logged.
	broken := &prefixDeleter{err: errors.New("bucket unreachable")}
	p = jobs.NewPurgeOnDelete(store, broken, logger)
	if got, err := p.DeleteAudio(t.Context(), 1, "ext-7"); err != nil || got != audio {
		t.Errorf("DeleteAudio with a failing media store = %v, %v", got, err)
	}
	if !strings.Contains(logs.String(), "bucket unreachable") {
		t.Errorf("the failed purge was not logged: %s", logs.String())
	}
}
