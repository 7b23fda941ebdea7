package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/hls"
	"github.com/narrator/narrator/internal/jobs"
)

// copyStore is what copy-data needs of a store, on either side.
type copyStore interface {
	ExportMeta(ctx context.Context) (*narrator.Export, error)
	ImportMeta(ctx context.Context, e *narrator.Export) error
	ExportAudios(ctx context.Context, afterID int64, limit int) ([]*narrator.Audio, error)
	ImportAudios(ctx context.Context, audios []*narrator.Audio) (inserted int, err error)
	ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error)
	SetProjectAccess(ctx context.Context, a *narrator.ProjectAccess) error
	RotateEmbedSecret(ctx context.Context, projectID int64, secret string) (narrator.ProjectAccess, error)
	ExportPublications(ctx context.Context, afterID int64, limit int) ([]narrator.Publication, error)
	SetPublication(ctx context.Context, p narrator.Publication) (narrator.Publication, error)
	Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error)
	SetClip(ctx context.Context, c *narrator.Clip) error
}

// copyMedia is what copy-data needs of a media store, on either side.
type copyMedia interface {
	Open(ctx context.Context, key string) (io.ReadSeekCloser, narrator.BlobInfo, error)
	Put(ctx context.Context, key string, r io.Reader) error
}

// copyBatch is how many audios copy-data reads, and imports in one target
// transaction, at a time: it bounds the memory the copy holds.
const copyBatch = 100

// maxPlaylistBytes bounds a playlist, which copy-data reads whole to find
// its segments. Ours take about 40 bytes per 6-second segment.
const maxPlaylistBytes = 1 << 20

const copyDataSynopsis = "copy-data --from-database DB --from-media MEDIA --to-database DB --to-media MEDIA"

// copyDataCommand is `narrator copy-data`.
type copyDataCommand struct{ e *env }

// Run runs `narrator copy-data`.
func (cmd copyDataCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "copy-data", copyDataSynopsis)
	finish := config.CopyFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := finish()
	if err != nil {
		return misuse(fs, "%v", err)
	}
	// Opening a SQLite database creates it: a mistyped source path must
	// not make an empty one and copy nothing from it.
	if kind, path, _ := config.ParseDatabase(c.From.Database); kind == config.SQLite {
		if _, err := os.Stat(path); err != nil {
			return misuse(fs, "--from-database: %v", err)
		}
	}
	// Only inserted: the target's servers synthesise the re-queued audios.
	jc := jobs.Config{Logger: slog.New(slog.DiscardHandler)}
	from, err := openBackends(ctx, c.From, jc, cliEventBody(e.getenv), narrator.Limits{}, false, e.getenv)
	if err != nil {
		return fmt.Errorf("copy-data: source: %w", err)
	}
	defer from.store.Close()
	to, err := openBackends(ctx, c.To, jc, cliEventBody(e.getenv), narrator.Limits{}, false, e.getenv)
	if err != nil {
		return fmt.Errorf("copy-data: target: %w", err)
	}
	defer to.store.Close()
	cp := &copier{from: from.store, to: to.store, fromMedia: from.media, toMedia: to.media, progress: e.stderr}
	if err := cp.run(ctx); err != nil {
		return fmt.Errorf("copy-data: %w", err)
	}
	cp.summary(e.stdout)
	return nil
}

// copier copies one install's data into another.
type copier struct {
	from, to           copyStore
	fromMedia, toMedia copyMedia
	progress           io.Writer

	meta        []tableCount // the tables other than audios
	total       int          // live audios of the source
	audiosNew   int          // audios copied
	audiosKnown int          // audios the target held already
	queued      int          // copied audios queued for synthesis
	filesNew    int          // media files copied
	filesKnown  int          // media files the target held already
}

// tableCount is how many rows of a table were copied and how many the
// target already held.
type tableCount struct {
	table          string
	copied, exists int
}

// run checks that the target may take the source's data, then copies the
// rows other than audios in one transaction, then the audios in batches,
// each batch's media files before its rows.
func (c *copier) run(ctx context.Context) error {
	src, err := c.from.ExportMeta(ctx)
	if err != nil {
		return fmt.Errorf("read source: %w", err)
	}
	dst, err := c.to.ExportMeta(ctx)
	if err != nil {
		return fmt.Errorf("read target: %w", err)
	}
	if err := narrator.CheckCopyTarget(src, dst); err != nil {
		return refused(err)
	}
	if err := c.checkAudios(ctx); err != nil {
		return err
	}
	c.meta = countMeta(src, dst)
	for _, p := range src.Projects {
		c.total += p.AudioCount
	}
	if err := c.to.ImportMeta(ctx, src); err != nil {
		return fmt.Errorf("copy accounts, keys, projects, users and rules: %w", err)
	}
	fmt.Fprintf(c.progress, "copied accounts, API keys, projects, users and pronunciation rules; copying %d audios\n", c.total)
	for after := int64(0); ; {
		page, err := c.from.ExportAudios(ctx, after, copyBatch)
		if err != nil {
			return fmt.Errorf("read source audios: %w", err)
		}
		if len(page) == 0 {
			if err := c.copyClips(ctx, src.Projects); err != nil {
				return err
			}
			return c.copyPublishing(ctx, src.Projects)
		}
		if err := c.copyAudios(ctx, page); err != nil {
			return err
		}
		after = page[len(page)-1].ID
		fmt.Fprintf(c.progress, "audios: %d of %d done; media files: %d copied, %d already there\n",
			c.audiosNew+c.audiosKnown, c.total, c.filesNew, c.filesKnown)
	}
}

// copyPublishing copies what decides who may listen: the projects' access
// settings with their signing secrets, and the audios' publications (the
// audios are in the target by then; a deleted one is skipped). Without
// them a copy would publish drafts and open signed projects.
func (c *copier) copyPublishing(ctx context.Context, projects []*narrator.Project) error {
	for _, p := range projects {
		a, err := c.from.ProjectAccess(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("read access of project %d: %w", p.ID, err)
		}
		if a.UpdatedAt.IsZero() {
			continue // never changed: the target's default
		}
		if a.SigningSecret != "" {
			if _, err := c.to.RotateEmbedSecret(ctx, p.ID, a.SigningSecret); err != nil {
				return fmt.Errorf("copy signing secret of project %d: %w", p.ID, err)
			}
		}
		if err := c.to.SetProjectAccess(ctx, &a); err != nil {
			return fmt.Errorf("copy access of project %d: %w", p.ID, err)
		}
	}
	for after := int64(0); ; {
		page, err := c.from.ExportPublications(ctx, after, copyBatch)
		if err != nil {
			return fmt.Errorf("read source publications: %w", err)
		}
		if len(page) == 0 {
			return nil
		}
		for _, pub := range page {
			if _, err := c.to.SetPublication(ctx, pub); err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND {
				return fmt.Errorf("copy publication of audio %d: %w", pub.AudioID, err)
			}
		}
		after = page[len(page)-1].AudioID
	}
}

// copyClips copies the projects' intros and outros, as they are stored.
func (c *copier) copyClips(ctx context.Context, projects []*narrator.Project) error {
	for _, p := range projects {
		for _, k := range narrator.ClipKinds() {
			clip, err := c.from.Clip(ctx, p.ID, k)
			if narrator.ErrorCode(err) == narrator.ENOTFOUND {
				continue
			}
			if err != nil {
				return fmt.Errorf("read %s of project %d: %w", k, p.ID, err)
			}
			if err := c.to.SetClip(ctx, clip); err != nil {
				return fmt.Errorf("copy %s of project %d: %w", k, p.ID, err)
			}
		}
	}
	return nil
}

// refused is the error of a copy that narrator.CheckCopyTarget or
// narrator.CheckCopiedAudio stopped before it wrote anything.
func refused(err error) error {
	return fmt.Errorf("%s; nothing was written (copy into an empty database, or into an earlier copy of this source)", narrator.ErrorMessage(err))
}

// checkAudios applies narrator.CheckCopiedAudio to each live audio of the
// target whose ID a live audio of the source has, before anything is
// written. Both are read by ID, side by side. (ImportAudios checks the
// target's deleted audios.)
func (c *copier) checkAudios(ctx context.Context) error {
	src, dst := &audioPages{store: c.from}, &audioPages{store: c.to}
	a, err := src.next(ctx)
	if err != nil {
		return fmt.Errorf("read source audios: %w", err)
	}
	b, err := dst.next(ctx)
	if err != nil {
		return fmt.Errorf("read target audios: %w", err)
	}
	for a != nil && b != nil {
		switch {
		case a.ID < b.ID:
			a, err = src.next(ctx)
		case a.ID > b.ID:
			b, err = dst.next(ctx)
		default:
			if err := narrator.CheckCopiedAudio(b, a); err != nil {
				return refused(err)
			}
			if a, err = src.next(ctx); err == nil {
				b, err = dst.next(ctx)
			}
		}
		if err != nil {
			return fmt.Errorf("compare audios: %w", err)
		}
	}
	return nil
}

// audioPages reads a store's live audios one by one, copyBatch at a time.
type audioPages struct {
	store copyStore
	after int64
	page  []*narrator.Audio
}

// next returns the audio with the next higher ID, or nil after the last.
func (p *audioPages) next(ctx context.Context) (*narrator.Audio, error) {
	if len(p.page) == 0 {
		page, err := p.store.ExportAudios(ctx, p.after, copyBatch)
		if err != nil || len(page) == 0 {
			return nil, err
		}
		p.page, p.after = page, page[len(page)-1].ID
	}
	a := p.page[0]
	p.page = p.page[1:]
	return a, nil
}

// countMeta counts, per table, the rows of src that dst lacks (which
// ImportMeta copies) and those it has.
func countMeta(src, dst *narrator.Export) []tableCount {
	return []tableCount{
		countRows("accounts", src.Accounts, dst.Accounts, func(a *narrator.Account) int64 { return a.ID }),
		countRows("api_keys", src.APIKeys, dst.APIKeys, func(k *narrator.ExportedAPIKey) int64 { return k.ID }),
		countRows("projects", src.Projects, dst.Projects, func(p *narrator.Project) int64 { return p.ID }),
		countRows("users", src.Users, dst.Users, func(u *narrator.User) int64 { return u.ID }),
		countRows("pronunciations", src.Pronunciations, dst.Pronunciations, func(p *narrator.Pronunciation) int64 { return p.ID }),
		countRows("feeds", src.Feeds, dst.Feeds, func(f *narrator.Feed) int64 { return f.ProjectID }),
		countRows("webhooks", src.Webhooks, dst.Webhooks, func(h *narrator.Webhook) int64 { return h.ID }),
		countRows("sources", src.Sources, dst.Sources, func(f *narrator.Source) int64 { return f.ID }),
	}
}

// countRows counts the rows of src whose IDs are missing from dst and those
// whose IDs are there.
func countRows[T any](table string, src, dst []T, id func(T) int64) tableCount {
	have := make(map[int64]bool, len(dst))
	for _, r := range dst {
		have[id(r)] = true
	}
	tc := tableCount{table: table}
	for _, r := range src {
		if have[id(r)] {
			tc.exists++
		} else {
			tc.copied++
		}
	}
	return tc
}

// copyAudios copies a page of source audios: their media files first, so
// that no copied row points to a missing file, then the rows, the
// unprocessed ones in a transaction of their own so that the summary can
// say how many were queued.
func (c *copier) copyAudios(ctx context.Context, page []*narrator.Audio) error {
	var pending, rest []*narrator.Audio
	for _, a := range page {
		if err := c.copyFiles(ctx, a); err != nil {
			return fmt.Errorf("copy media of audio %d: %w", a.ID, err)
		}
		if a.AwaitsSynthesis() {
			pending = append(pending, a)
		} else {
			rest = append(rest, a)
		}
	}
	queued, err := c.importAudios(ctx, pending)
	if err != nil {
		return err
	}
	n, err := c.importAudios(ctx, rest)
	if err != nil {
		return err
	}
	c.queued += queued
	c.audiosNew += queued + n
	c.audiosKnown += len(page) - queued - n
	return nil
}

// importAudios imports audios into the target, if there are any, and
// returns how many it inserted.
func (c *copier) importAudios(ctx context.Context, audios []*narrator.Audio) (int, error) {
	if len(audios) == 0 {
		return 0, nil
	}
	n, err := c.to.ImportAudios(ctx, audios)
	if err != nil {
		return 0, fmt.Errorf("copy audios %d to %d: %w", audios[0].ID, audios[len(audios)-1].ID, err)
	}
	return n, nil
}

// copyFiles copies the published media files of an audio: the MP3 with
// the transcript beside it (renderings made before transcripts have none),
// and the playlist with every segment it names and the ended live playlist
// beside it (renderings made before live streams have none), which a
// player that started while the audio was made may still read.
func (c *copier) copyFiles(ctx context.Context, a *narrator.Audio) error {
	for _, m := range a.Media {
		switch {
		case m.Key == "":
		case m.ContentType == narrator.ContentTypeM3U8:
			if err := c.copyPlaylist(ctx, m.Key); err != nil {
				return err
			}
			live := path.Join(path.Dir(m.Key), narrator.LivePlaylistName)
			if err := c.copyFile(ctx, live); err != nil && !errors.Is(err, narrator.ErrBlobNotFound) {
				return err
			}
		case m.ContentType == narrator.ContentTypeMP3:
			if err := c.copyFile(ctx, m.Key); err != nil {
				return err
			}
			jsonKey, vttKey := narrator.TranscriptKeys(m.Key)
			for _, k := range []string{jsonKey, vttKey, narrator.PodcastTranscriptKey(m.Key), narrator.ChaptersKey(m.Key)} {
				if err := c.copyFile(ctx, k); err != nil && !errors.Is(err, narrator.ErrBlobNotFound) {
					return err
				}
			}
		default:
			if err := c.copyFile(ctx, m.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyPlaylist copies the segments a playlist names, then the playlist.
func (c *copier) copyPlaylist(ctx context.Context, key string) error {
	r, _, err := c.fromMedia.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("open source %s: %w", key, err)
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxPlaylistBytes+1))
	r.Close()
	if err != nil {
		return fmt.Errorf("read source %s: %w", key, err)
	}
	if len(raw) > maxPlaylistBytes {
		return fmt.Errorf("source playlist %s is over %d bytes", key, maxPlaylistBytes)
	}
	segments, err := hls.SegmentKeys(key, raw)
	if err != nil {
		return err
	}
	for _, seg := range segments {
		if err := c.copyFile(ctx, seg); err != nil {
			return err
		}
	}
	return c.put(ctx, key, int64(len(raw)), bytes.NewReader(raw))
}

// copyFile streams one file from the source media store to the target's.
func (c *copier) copyFile(ctx context.Context, key string) error {
	r, info, err := c.fromMedia.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("open source %s: %w", key, err)
	}
	defer r.Close()
	return c.put(ctx, key, info.Size, r)
}

// put stores r, of size bytes, at key on the target, unless the target
// holds a file of that size there already.
func (c *copier) put(ctx context.Context, key string, size int64, r io.Reader) error {
	have, info, err := c.toMedia.Open(ctx, key)
	switch {
	case err == nil:
		have.Close()
		if info.Size == size {
			c.filesKnown++
			return nil
		}
	case !errors.Is(err, narrator.ErrBlobNotFound):
		return fmt.Errorf("look for target %s: %w", key, err)
	}
	if err := c.toMedia.Put(ctx, key, r); err != nil {
		return fmt.Errorf("store target %s: %w", key, err)
	}
	c.filesNew++
	return nil
}

// summary prints one line per table and one for the media files.
func (c *copier) summary(w io.Writer) {
	for _, tc := range c.meta {
		fmt.Fprintf(w, "%s: %d copied, %d already on the target\n", tc.table, tc.copied, tc.exists)
	}
	fmt.Fprintf(w, "audios: %d copied (%d queued for synthesis), %d already on the target; deleted audios are not copied\n",
		c.audiosNew, c.queued, c.audiosKnown)
	fmt.Fprintf(w, "media files: %d copied, %d skipped (already on the target with the same size)\n", c.filesNew, c.filesKnown)
	fmt.Fprintln(w, "sessions: not copied; dashboard users sign in again on the target")
}
