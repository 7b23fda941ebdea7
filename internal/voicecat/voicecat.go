// Package voicecat keeps a server's voice catalog: the built-in voices and
// those the operator installed, read from the database. Every node of a
// cluster reads the same rows, so a voice installed on one node is offered
// by all of them within the refresh interval. A rendering does not wait for
// it: it starts from Fresh, so that a voice removed anywhere speaks no new
// rendering.
package voicecat

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/narrator/narrator"
)

// Lister lists the installed voices.
type Lister interface {
	ListInstalledVoices(ctx context.Context) ([]*narrator.InstalledVoice, error)
}

// Source gives the current catalog, reading the installed voices again
// when the last read is older than its refresh interval. It is safe for
// concurrent use.
type Source struct {
	list    Lister
	refresh time.Duration
	now     func() time.Time
	logger  *slog.Logger

	mu        sync.Mutex
	cat       *narrator.Catalog
	installed []*narrator.InstalledVoice
	readAt    time.Time
}

// New returns a Source that reads from list at most once per refresh
// (zero means 5 s). logger hears of failed reads; nil discards them.
func New(list Lister, refresh time.Duration, logger *slog.Logger) *Source {
	if refresh <= 0 {
		refresh = 5 * time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Source{list: list, refresh: refresh, now: time.Now, logger: logger, cat: narrator.BuiltinCatalog()}
}

// Catalog returns the current catalog. If the installed voices cannot be
// read, it returns the last catalog read (at first, the built-in voices
// alone) and tries again at the next refresh.
func (s *Source) Catalog(ctx context.Context) *narrator.Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read(ctx, false)
	return s.cat
}

// Fresh returns the catalog read again at once, as every rendering starts: a voice installed
// or removed on another node a moment ago is in it or not. If the read fails, it returns the
// last catalog.
func (s *Source) Fresh(ctx context.Context) *narrator.Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read(ctx, true)
	return s.cat
}

// Installed returns the installed voice whose ID is id. A voice not in the
// last read, perhaps installed on another node since, makes it read again
// at once. It returns ENOTFOUND if no installed voice has the ID.
func (s *Source) Installed(ctx context.Context, id string) (*narrator.InstalledVoice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read(ctx, false)
	if v, err := narrator.FindInstalledVoice(s.installed, id); err == nil {
		return v, nil
	}
	if err := s.read(ctx, true); err != nil {
		return nil, err
	}
	return narrator.FindInstalledVoice(s.installed, id)
}

// read reads the installed voices if the last read is older than the
// refresh interval, or always if force. s.mu is held.
func (s *Source) read(ctx context.Context, force bool) error {
	now := s.now()
	if !force && !s.readAt.IsZero() && now.Sub(s.readAt) < s.refresh {
		return nil
	}
	s.readAt = now
	vs, err := s.list.ListInstalledVoices(ctx)
	if err != nil {
		s.logger.Warn("read the installed voices; the catalog stays as it was", "err", err)
		return err
	}
	s.installed = vs
	s.cat = narrator.NewCatalog(vs)
	return nil
}
