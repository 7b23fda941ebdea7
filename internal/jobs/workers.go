package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/narrator/narrator"
)

// Store is what the synthesis worker needs from storage.
type Store interface {
	// AudioForSynthesis returns the audio, deleted or not, and its project.
	AudioForSynthesis(ctx context.Context, audioID int64) (*narrator.Audio, *narrator.Project, error)
	// PublishAudio returns ECONFLICT if the audio was deleted or changed
	// since revision.
	PublishAudio(ctx context.Context, audioID int64, revision int, keys map[string]string, durationMS int64) error
	FailAudio(ctx context.Context, audioID int64, revision int, message string) error
}

// Renderer turns an audio into published media files.
type Renderer interface {
	// Render writes the audio's media and returns their keys by content type
	// and the audio's duration. On error it leaves no files behind.
	Render(ctx context.Context, a *narrator.Audio, p *narrator.Project) (keys map[string]string, d time.Duration, err error)
}

// MediaDeleter removes media files.
type MediaDeleter interface {
	// DeletePrefix removes every object under prefix; missing ones are fine.
	DeletePrefix(ctx context.Context, prefix string) error
}

// SynthesizeWorker renders an audio revision and publishes it.
type SynthesizeWorker struct {
	river.WorkerDefaults[SynthesizeArgs]
	store  Store
	render Renderer
	media  MediaDeleter
	logger *slog.Logger
}

// NewSynthesizeWorker returns the synthesis worker.
func NewSynthesizeWorker(store Store, render Renderer, media MediaDeleter, logger *slog.Logger) *SynthesizeWorker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SynthesizeWorker{store: store, render: render, media: media, logger: logger}
}

// Work implements river.Worker. Delivery is at least once, so every step is
// idempotent: a stale or repeated job finds nothing to do.
func (w *SynthesizeWorker) Work(ctx context.Context, job *river.Job[SynthesizeArgs]) error {
	args := job.Args
	a, p, err := w.store.AudioForSynthesis(ctx, args.AudioID)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("load audio %d: %w", args.AudioID, err)
	case a.Deleted || a.Revision != args.Revision || a.State == narrator.StateProcessed:
		return nil
	}
	log := w.logger.With("audio_id", a.ID, "revision", a.Revision, "attempt", job.Attempt)
	start := time.Now()
	keys, d, err := w.render.Render(ctx, a, p)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			// The server is shutting down: put the job back untouched.
			return river.JobSnooze(time.Second)
		}
		// A coded invalid error is a problem of the article itself: trying
		// again cannot help.
		permanent := narrator.ErrorCode(err) == narrator.EINVALID
		if permanent || job.Attempt >= job.MaxAttempts {
			msg := "Speech could not be made for this article: " + publisherReason(err)
			if ferr := w.store.FailAudio(context.WithoutCancel(ctx), a.ID, a.Revision, msg); ferr != nil {
				return fmt.Errorf("render audio %d: %w (and marking it failed: %v)", a.ID, err, ferr)
			}
			log.Error("synthesis failed for good", "err", err)
		}
		if permanent {
			return river.JobCancel(fmt.Errorf("render audio %d: %w", a.ID, err))
		}
		return fmt.Errorf("render audio %d: %w", a.ID, err)
	}
	if err := w.store.PublishAudio(ctx, a.ID, a.Revision, keys, d.Milliseconds()); err != nil {
		w.discard(context.WithoutCancel(ctx), keys, log)
		if narrator.ErrorCode(err) == narrator.ECONFLICT {
			return nil // changed or deleted meanwhile; a newer job has it
		}
		return fmt.Errorf("publish audio %d: %w", a.ID, err)
	}
	log.Info("audio processed", "duration_ms", d.Milliseconds(), "took_ms", time.Since(start).Milliseconds())
	return nil
}

// discard deletes files that were rendered but will not be published.
func (w *SynthesizeWorker) discard(ctx context.Context, keys map[string]string, log *slog.Logger) {
	for _, prefix := range prefixes(slices.Collect(maps.Values(keys))) {
		if err := w.media.DeletePrefix(ctx, prefix); err != nil {
			log.Warn("discard unpublished media", "prefix", prefix, "err", err)
		}
	}
}

// publisherReason says in plain words what went wrong. Coded errors carry
// their own safe message; anything else is the engine's fault.
func publisherReason(err error) string {
	var e *narrator.Error
	switch {
	case errors.As(err, &e):
		return e.Message
	case errors.Is(err, context.DeadlineExceeded):
		return "the speech engine took too long to read it."
	default:
		return "the speech engine could not read it. Try again later, or check the text for unusual content."
	}
}

// DeleteMediaWorker deletes media files that no audio references any more.
type DeleteMediaWorker struct {
	river.WorkerDefaults[DeleteMediaArgs]
	media MediaDeleter
}

// NewDeleteMediaWorker returns the media deletion worker.
func NewDeleteMediaWorker(media MediaDeleter) *DeleteMediaWorker {
	return &DeleteMediaWorker{media: media}
}

// Work implements river.Worker. Deleting is idempotent.
func (w *DeleteMediaWorker) Work(ctx context.Context, job *river.Job[DeleteMediaArgs]) error {
	return w.Purge(ctx, job.Args.Keys)
}

// Purge deletes media files and everything stored beside them under the
// same token, at once. Callers that purge right after a delete still leave
// the queued job to finish the work if the process dies in between.
func (w *DeleteMediaWorker) Purge(ctx context.Context, keys []string) error {
	for _, prefix := range prefixes(keys) {
		if err := w.media.DeletePrefix(ctx, prefix); err != nil {
			return fmt.Errorf("delete media %s: %w", prefix, err)
		}
	}
	return nil
}

// prefixes returns the distinct folders of keys. All files of one rendering
// (MP3, playlist, segments) share a folder named by a random token.
func prefixes(keys []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if dir := path.Dir(k); dir != "." && dir != "/" && !seen[dir] {
			seen[dir] = true
			out = append(out, dir+"/")
		}
	}
	return out
}
