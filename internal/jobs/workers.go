package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/narrator/narrator"
)

// Store is what the synthesis worker needs from storage.
type Store interface {
	// AudioForSynthesis returns the audio, deleted or not, and its project.
	AudioForSynthesis(ctx context.Context, audioID int64) (*narrator.Audio, *narrator.Project, error)
	// FinishAudio returns ECONFLICT if the audio was deleted or changed
	// since revision.
	FinishAudio(ctx context.Context, audioID int64, revision int, r narrator.Rendering) error
	FailAudio(ctx context.Context, audioID int64, revision int, message string) error
	// LeaseSynthesis takes or renews holder's lease on synthesising a
	// revision; false while another holder's lease runs.
	LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error)
	// RequeueSynthesis queues the next try of a synthesis job of revision
	// that found another attempt holding its lease, to start after the
	// given time, if the audio still awaits it; it reports whether it did.
	RequeueSynthesis(ctx context.Context, audioID int64, revision int, after time.Time) (bool, error)
	// ReleaseSynthesis drops holder's lease, if it still holds it, and
	// the progress it reported.
	ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error
	// ReportSynthesis records holder's progress on a revision; false
	// unless holder holds the lease on it.
	ReportSynthesis(ctx context.Context, audioID int64, holder string, p narrator.SynthesisProgress) (bool, error)
}

// Renderer turns an audio into published media files.
type Renderer interface {
	// RenderLive writes the audio's media and returns their keys and sizes
	// by content type and the audio's duration. On error it leaves no
	// files behind. While it works it calls progress, which must not
	// block, with its progress and the key of its live playlist.
	RenderLive(ctx context.Context, a *narrator.Audio, p *narrator.Project, progress func(narrator.RenderProgress)) (narrator.Rendering, error)
	// Catalog is the voice catalog the renderer speaks from.
	Catalog(ctx context.Context) *narrator.Catalog
}

// MediaDeleter removes media files.
type MediaDeleter interface {
	// DeletePrefix removes every object under prefix; missing ones are fine.
	DeletePrefix(ctx context.Context, prefix string) error
}

// SynthesizeConfig configures the synthesis worker.
type SynthesizeConfig struct {
	Logger *slog.Logger
	// Node names this process in lease holders, so that logs and the
	// database tell which node is working an audio.
	Node string
	// Timeout bounds one synthesis attempt. The largest article takes a few
	// minutes on two cores; a hung attempt must not hold a worker forever.
	// Default: 20 minutes.
	Timeout time.Duration
	// RescueAfter must equal the queue's Config.RescueAfter. It is the
	// timeout this worker declares to River (see Timeout): River's rescuer
	// honours a job kind's own timeout, so only a timeout this short lets
	// it hand the job of a dead node to another within minutes. Default:
	// 2 minutes.
	RescueAfter time.Duration
	// LeaseTTL is how long a lease lasts unless renewed; it is renewed at a
	// third of it. A node that dies leaves its lease to run out, after
	// which a rescued twin of its job takes the audio over. Default: half
	// of RescueAfter, so that the lease of a dead node has run out when
	// River rescues its job.
	LeaseTTL time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Metrics, if not nil, is told of every audio published.
	Metrics SynthesisRecorder
}

// SynthesisRecorder is told of every audio published: the engine of its
// body voice, the length of the audio and the wall time its synthesis took.
type SynthesisRecorder interface {
	Synthesized(engine string, audio, took time.Duration)
}

// SynthesizeWorker renders an audio revision and finishes it.
//
// Delivery is at least once, and in a cluster River rescues a job whose
// node stopped answering, which can also rescue one that is only slow.
// So each attempt first takes a lease on the audio in the database and
// renews it while it works; a twin that finds the lease held waits for it
// to end, and a result is published once (narrator.PlanFinish).
type SynthesizeWorker struct {
	river.WorkerDefaults[SynthesizeArgs]
	store  Store
	render Renderer
	media  MediaDeleter
	cfg    SynthesizeConfig
	// promote moves a starting job ahead of new ones (fair.go); nil until
	// the queue starts the worker.
	promote func(ctx context.Context, jobID int64) error
}

// NewSynthesizeWorker returns the synthesis worker.
func NewSynthesizeWorker(store Store, render Renderer, media MediaDeleter, cfg SynthesizeConfig) *SynthesizeWorker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Minute
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = 2 * time.Minute
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = cfg.RescueAfter / 2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Node == "" {
		cfg.Node = "node"
	}
	return &SynthesizeWorker{store: store, render: render, media: media, cfg: cfg}
}

// Timeout implements river.Worker. It is River's rescue timer, not the
// limit of an attempt: when it runs out River cancels the job's context
// with DeadlineExceeded, which Work lets the rendering outlive (bounded by
// SynthesizeConfig.Timeout, and kept alone by the lease), and the rescuer
// may hand the job to another node, which waits for the lease.
func (w *SynthesizeWorker) Timeout(*river.Job[SynthesizeArgs]) time.Duration {
	return w.cfg.RescueAfter
}

// Work implements river.Worker. Delivery is at least once, so every step is
// idempotent: a stale or repeated job finds nothing to do.
func (w *SynthesizeWorker) Work(ctx context.Context, job *river.Job[SynthesizeArgs]) error {
	args := job.Args
	if w.promote != nil && job.Priority != priorityStarted {
		// Should this attempt not finish, the job keeps its place.
		if err := w.promote(ctx, job.ID); err != nil {
			w.cfg.Logger.Warn("promote synthesis job", "job_id", job.ID, "err", err)
		}
	}
	a, p, err := w.store.AudioForSynthesis(ctx, args.AudioID)
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("load audio %d: %w", args.AudioID, err)
	case !a.AwaitsRevision(args.Revision):
		return nil
	}
	log := w.cfg.Logger.With("audio_id", a.ID, "project_id", a.ProjectID, "revision", a.Revision, "attempt", job.Attempt)
	holder := fmt.Sprintf("%s/job-%d/attempt-%d", w.cfg.Node, job.ID, job.Attempt)
	ok, err := w.store.LeaseSynthesis(ctx, a.ID, a.Revision, holder, w.cfg.Now().Add(w.cfg.LeaseTTL))
	switch {
	case err != nil:
		return fmt.Errorf("lease audio %d: %w", a.ID, err)
	case !ok:
		return w.leaseRefused(ctx, a.ID, args.Revision, log)
	}
	defer func() {
		if err := w.store.ReleaseSynthesis(context.WithoutCancel(ctx), a.ID, holder); err != nil {
			log.Warn("release synthesis lease", "err", err)
		}
	}()
	log.Info("synthesizing", "holder", holder)
	// workCtx bounds the attempt on its own and carries every later call.
	workCtx, stopWork := attemptContext(ctx, w.cfg.Timeout)
	defer stopWork()
	renderCtx, stopRender := context.WithCancel(workCtx)
	var (
		renewing sync.WaitGroup
		lost     atomic.Bool
	)
	renewing.Go(func() {
		if !w.renew(renderCtx, a, holder, log) {
			lost.Store(true)
			stopRender()
		}
	})
	start := time.Now()
	progress := newProgressReporter(w.store, a, holder, w.cfg.Now(), log)
	renewing.Go(func() { progress.run(renderCtx) })
	r, err := w.render.RenderLive(renderCtx, a, p, progress.report)
	stopRender()
	renewing.Wait()
	if lost.Load() {
		if err == nil {
			w.discard(context.WithoutCancel(ctx), r.Keys, log)
		}
		return nil // changed, deleted, or another attempt took it over
	}
	if err != nil {
		return w.renderFailed(ctx, job, a, err, log)
	}
	if err := w.store.FinishAudio(workCtx, a.ID, a.Revision, r); err != nil {
		w.discard(context.WithoutCancel(ctx), r.Keys, log)
		if narrator.ErrorCode(err) == narrator.ECONFLICT {
			return nil // changed, deleted or published meanwhile
		}
		return fmt.Errorf("finish audio %d: %w", a.ID, err)
	}
	took := time.Since(start)
	log.Info("audio processed", "duration_ms", r.Duration.Milliseconds(), "took_ms", took.Milliseconds())
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.Synthesized(bodyEngine(w.render.Catalog(ctx), p), r.Duration, took)
	}
	return nil
}

// attemptContext returns a context for one attempt of a job whose River context is ctx,
// ending after timeout. River ends ctx with DeadlineExceeded at its rescue timer and with
// Canceled at shutdown; only shutdown ends the attempt's context. stop releases it.
func attemptContext(ctx context.Context, timeout time.Duration) (_ context.Context, stop func()) {
	attempt, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	unfollow := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return attempt, func() {
		unfollow()
		cancel()
	}
}

// leaseRefused handles a lease the store refused: the audio changed since it was read, and
// the change queued its own job, or another attempt holds the lease on this revision. Only
// the latter tries again, in a job that the store queues only if the revision still waits,
// with the audio's row locked, as a change removes the jobs that wait (SupersedeSynthesis):
// this one, running, ends, and no stale job stays queued beside the change's own, whenever
// it lands.
func (w *SynthesizeWorker) leaseRefused(ctx context.Context, audioID int64, revision int, log *slog.Logger) error {
	_, err := w.store.RequeueSynthesis(ctx, audioID, revision, w.cfg.Now().Add(w.cfg.LeaseTTL))
	switch {
	case narrator.ErrorCode(err) == narrator.ENOTFOUND:
		return nil
	case err != nil:
		return fmt.Errorf("requeue synthesis of audio %d: %w", audioID, err)
	}
	log.Info("another attempt holds this audio; waiting for its lease")
	return nil
}

// renderFailed decides what becomes of a job whose rendering failed with err: put back
// untouched at shutdown, tried again while attempts remain and the error may pass, and
// otherwise the audio marked failed for good.
func (w *SynthesizeWorker) renderFailed(ctx context.Context, job *river.Job[SynthesizeArgs], a *narrator.Audio, err error, log *slog.Logger) error {
	if errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled) {
		// The server is shutting down: put the job back untouched.
		return river.JobSnooze(time.Second)
	}
	// A coded invalid error is a problem of the article or of its voice
	// (narrator.VoiceFailed): trying again cannot help.
	permanent := narrator.ErrorCode(err) == narrator.EINVALID
	if !permanent && job.Attempt < job.MaxAttempts {
		log.Warn("synthesis attempt failed; it will be tried again", "max_attempts", job.MaxAttempts, "err", err)
	}
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

// bodyEngine names the engine of a project's body voice, which speaks most
// of every audio.
func bodyEngine(cat *narrator.Catalog, p *narrator.Project) string {
	if v, _, ok := cat.Resolve(p.Language, p.BodyVoice, false); ok {
		return v.Engine
	}
	return "unknown"
}

// renew keeps holder's lease on a alive until ctx ends, and reports false
// if the lease was lost: the audio changed or was deleted, or another
// attempt took it over after a stall longer than the lease. A failed
// renewal (a database hiccup) is retried at the next tick.
func (w *SynthesizeWorker) renew(ctx context.Context, a *narrator.Audio, holder string, log *slog.Logger) bool {
	t := time.NewTicker(w.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-t.C:
		}
		ok, err := w.store.LeaseSynthesis(ctx, a.ID, a.Revision, holder, w.cfg.Now().Add(w.cfg.LeaseTTL))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("renew synthesis lease", "err", err)
		case err == nil && !ok:
			log.Info("synthesis lease lost; stopping this attempt")
			return false
		}
	}
}

// discard deletes files that were rendered but will not be published.
func (w *SynthesizeWorker) discard(ctx context.Context, keys map[string]string, log *slog.Logger) {
	for _, prefix := range prefixes(slices.Collect(maps.Values(keys))) {
		if err := w.media.DeletePrefix(ctx, prefix); err != nil {
			log.Warn("discard unfinished media", "prefix", prefix, "err", err)
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

// Timeout implements river.Worker: deleting a few files is quick, and a
// stuck store must not hold a worker forever.
func (w *DeleteMediaWorker) Timeout(*river.Job[DeleteMediaArgs]) time.Duration {
	return 5 * time.Minute
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
// (MP3, playlist, segments, transcript) share a folder named by a random
// token.
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

// VoicePreviewer speaks a short text in a voice as an MP3: the pipeline.
type VoicePreviewer interface {
	PreviewVoice(ctx context.Context, v narrator.Voice, text string, w io.Writer) error
	// Catalog is the voice catalog the previewer speaks from.
	Catalog(ctx context.Context) *narrator.Catalog
}

// MediaPutter stores media.
type MediaPutter interface {
	Put(ctx context.Context, key string, r io.Reader) error
}

// PreviewWorker makes voice previews and stores them where every node
// finds them.
type PreviewWorker struct {
	river.WorkerDefaults[PreviewArgs]
	previewer VoicePreviewer
	media     MediaPutter
}

// NewPreviewWorker returns the preview worker.
func NewPreviewWorker(previewer VoicePreviewer, media MediaPutter) *PreviewWorker {
	return &PreviewWorker{previewer: previewer, media: media}
}

// Timeout implements river.Worker: a preview is one sentence.
func (w *PreviewWorker) Timeout(*river.Job[PreviewArgs]) time.Duration { return time.Minute }

// Work implements river.Worker. Storing the same preview again is harmless.
func (w *PreviewWorker) Work(ctx context.Context, job *river.Job[PreviewArgs]) error {
	args := job.Args
	v, ok := w.previewer.Catalog(ctx).Lookup(args.Language, args.Voice)
	if !ok {
		return river.JobCancel(fmt.Errorf("preview: no voice %s/%s", args.Language, args.Voice))
	}
	var buf bytes.Buffer
	if err := w.previewer.PreviewVoice(ctx, v, args.Text, &buf); err != nil {
		return fmt.Errorf("preview %s/%s: %w", args.Language, args.Voice, err)
	}
	if err := w.media.Put(ctx, args.Key, &buf); err != nil {
		return fmt.Errorf("store preview %s: %w", args.Key, err)
	}
	return nil
}
