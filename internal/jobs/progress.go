package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// progressReporter stores a rendering's progress for every node to read.
// The rendering reports each change (report); the reporter keeps only the
// latest and writes it from its own goroutine (run), at most every
// narrator.ProgressReportInterval, so that the rendering never waits on
// the database. The first report that names the live playlist is written
// at once: a listener may be waiting for it.
type progressReporter struct {
	store    Store
	audioID  int64
	holder   string
	base     narrator.SynthesisProgress // revision and start
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	latest narrator.RenderProgress
	wake   chan struct{} // holds a token when latest changed
}

func newProgressReporter(store Store, a *narrator.Audio, holder string, started time.Time, log *slog.Logger) *progressReporter {
	return &progressReporter{
		store:    store,
		audioID:  a.ID,
		holder:   holder,
		base:     narrator.SynthesisProgress{Revision: a.Revision, StartedAt: started},
		interval: narrator.ProgressReportInterval,
		log:      log,
		wake:     make(chan struct{}, 1),
	}
}

// report takes the rendering's latest progress. It never blocks.
func (r *progressReporter) report(p narrator.RenderProgress) {
	r.mu.Lock()
	r.latest = p
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *progressReporter) current() narrator.RenderProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latest
}

// run writes the reports until ctx ends. A failed write is logged and
// left to the next report: progress is only a display.
func (r *progressReporter) run(ctx context.Context) {
	var (
		wrote   time.Time
		liveKey string
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if p := r.current(); p.LiveKey == liveKey {
			if wait := r.interval - time.Since(wrote); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
		p := r.base
		p.RenderProgress = r.current()
		wrote, liveKey = time.Now(), p.LiveKey
		if _, err := r.store.ReportSynthesis(ctx, r.audioID, r.holder, p); err != nil && ctx.Err() == nil {
			r.log.Warn("report synthesis progress", "err", err)
		}
	}
}
