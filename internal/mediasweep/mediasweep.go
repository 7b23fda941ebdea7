// Package mediasweep deletes the folders of media that renderings left
// behind and no audio owns.
//
// A rendering writes its files (live playlist, segments, MP3, transcript)
// into a folder of its own (narrator.NewMediaFolder) before its audio's
// row names them. If its process dies first, nothing names the folder and
// nothing deletes it: the restart drops the rendering's progress, and the
// job starts again in a new folder. The media server refuses such a
// folder (it may be a signed project's); the sweeper deletes it.
//
// A folder is deleted only if its name is a rendering's
// (narrator.IsMediaFolder: voices and previews are kept elsewhere), no
// audio owns it (none of its media or its progress name it), and its
// files were all written before narrator.MediaOrphanCutoff: an hour ago
// (Run), so that a rendering still at work on another node, whose files
// are new and which its progress soon names, is never touched; or at any
// time, in a sweep that a server which is the only writer of the media
// store makes before its jobs start (Sweep with the zero cutoff).
package mediasweep

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/narrator/narrator"
)

// Media is the media store the sweeper lists and deletes from.
type Media interface {
	// Folders returns the names of the top-level folders.
	Folders(ctx context.Context) ([]string, error)
	// List returns every object under prefix + "/" with its info.
	List(ctx context.Context, prefix string) ([]narrator.BlobObject, error)
	// DeletePrefix removes every object under prefix; nothing there is
	// not an error.
	DeletePrefix(ctx context.Context, prefix string) error
}

// Owners finds who owns a folder of media.
type Owners interface {
	// MediaAccess returns the access settings of the project whose audio
	// owns folder, by its media or its progress. It returns ENOTFOUND when
	// no audio does.
	MediaAccess(ctx context.Context, folder string) (narrator.ProjectAccess, error)
}

// Config configures a Sweeper.
type Config struct {
	Media  Media
	Owners Owners
	// Logger receives what was deleted and what failed; discarded if nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Sweeper deletes orphaned folders of media.
type Sweeper struct {
	cfg Config
}

// New returns a Sweeper.
func New(cfg Config) *Sweeper {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sweeper{cfg: cfg}
}

// Run sweeps at once, then every narrator.MediaSweepInterval, until ctx
// ends, the folders left alone for narrator.OrphanMediaAge. A failed
// sweep is logged and tried again at the next.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(narrator.MediaSweepInterval)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx, narrator.MediaOrphanCutoff(s.cfg.Now(), false)); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("sweep orphaned media", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes, once, the folders of renderings that no audio owns and
// whose files were all written before cutoff (any, for the zero cutoff:
// narrator.MediaOrphanCutoff), and returns how many it deleted. A folder
// that cannot be judged or deleted is logged and left for the next sweep;
// the error is the listing's of the folders, or ctx's.
func (s *Sweeper) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	folders, err := s.cfg.Media.Folders(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep media: %w", err)
	}
	deleted := 0
	for _, folder := range folders {
		if !narrator.IsMediaFolder(folder) {
			continue
		}
		ok, err := s.sweepFolder(ctx, folder, cutoff)
		switch {
		case err != nil && ctx.Err() != nil:
			return deleted, fmt.Errorf("sweep media: %w", ctx.Err())
		case err != nil:
			s.cfg.Logger.Warn("sweep orphaned media folder", "folder", folder, "err", err)
		case ok:
			deleted++
		}
	}
	if deleted > 0 {
		s.cfg.Logger.Info("deleted orphaned media", "folders", deleted)
	}
	return deleted, nil
}

// sweepFolder deletes folder if no audio owns it and its files were all
// written before cutoff, and reports whether it did. Ownership is asked
// first and the files' times read after: a rendering whose progress does
// not yet name its folder has written there moments before, so it is
// left alone.
func (s *Sweeper) sweepFolder(ctx context.Context, folder string, cutoff time.Time) (bool, error) {
	_, err := s.cfg.Owners.MediaAccess(ctx, folder)
	switch {
	case err == nil:
		return false, nil
	case narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return false, fmt.Errorf("find owner of media folder %s: %w", folder, err)
	}
	objs, err := s.cfg.Media.List(ctx, folder)
	if err != nil {
		return false, fmt.Errorf("list media folder %s: %w", folder, err)
	}
	if !cutoff.IsZero() {
		for _, o := range objs {
			if !o.ModTime.Before(cutoff) {
				return false, nil
			}
		}
	}
	if err := s.cfg.Media.DeletePrefix(ctx, folder); err != nil {
		return false, fmt.Errorf("delete media folder %s: %w", folder, err)
	}
	s.cfg.Logger.Debug("deleted orphaned media folder", "folder", folder, "files", len(objs))
	return true, nil
}
