package jobs

import (
	"context"
	"log/slog"

	"github.com/narrator/narrator"
)

// AudioDeleter deletes a live audio as a store does: it returns the audio
// as it was, with Deleted set, and queues a delete_media job for its files
// in the same transaction.
type AudioDeleter interface {
	DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
}

// PurgeOnDelete deletes audios through a store, then removes their media
// files at once, so that their URLs answer 404 as soon as the delete does.
// The delete_media job queued with the delete stays, and finishes the work
// if the process dies in between or the removal fails.
type PurgeOnDelete struct {
	store  AudioDeleter
	purger *DeleteMediaWorker
	logger *slog.Logger
}

// NewPurgeOnDelete returns deletes through store that purge media from
// media, logging a failed removal to logger.
func NewPurgeOnDelete(store AudioDeleter, media MediaDeleter, logger *slog.Logger) *PurgeOnDelete {
	return &PurgeOnDelete{store: store, purger: NewDeleteMediaWorker(media), logger: logger}
}

// DeleteAudio deletes an audio, then its media files. A failed removal is
// logged, not returned: the audio is deleted, and its queued job retries.
func (p *PurgeOnDelete) DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error) {
	a, err := p.store.DeleteAudio(ctx, projectID, ref)
	if err != nil {
		return nil, err
	}
	if err := p.purger.Purge(ctx, a.MediaKeys()); err != nil {
		p.logger.WarnContext(ctx, "delete media now; the queued job will retry", "audio_id", a.ID, "err", err)
	}
	return a, nil
}
