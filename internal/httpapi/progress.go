package httpapi

import (
	"context"
	"math"
	"net/http"

	"github.com/narrator/narrator"
)

// QueuePositioner tells where an audio waits among the synthesis jobs.
type QueuePositioner interface {
	// SynthesisQueuePosition returns the audio's place in the line of
	// synthesis jobs waiting for a worker, 1 for the next; false when no
	// job of the audio waits.
	SynthesisQueuePosition(ctx context.Context, audioID int64) (int, bool, error)
}

// progressJSON is the answer of the progress extension. Optional fields
// are left out when they do not apply; docs/api.md has the contract.
type progressJSON struct {
	AudioID int64  `json:"audio_id"`
	State   string `json:"state"`
	// Queued is true while the audio's synthesis waits for a worker.
	Queued        bool `json:"queued"`
	QueuePosition *int `json:"queue_position,omitempty"`
	// UnitsDone and UnitsTotal count sentences (the title and author
	// included) once synthesis has begun; Share is their ratio, and 1 when
	// processed.
	UnitsDone  *int     `json:"units_done,omitempty"`
	UnitsTotal *int     `json:"units_total,omitempty"`
	Share      *float64 `json:"share,omitempty"`
	// ETASeconds estimates the seconds left, rounded, once a unit is done.
	ETASeconds *int `json:"eta_seconds,omitempty"`
	// LiveURL is the live HLS playlist, once its first segment plays, and
	// LiveMP3URL the same stream as a growing MP3.
	LiveURL    string `json:"live_url,omitempty"`
	LiveMP3URL string `json:"live_mp3_url,omitempty"`
}

// audioProgress answers with how far the synthesis of the path's audio,
// found as GET one audio finds it, has got: its place in the queue, or the
// share of its sentences done with an estimate of the time left and its
// live stream. Every node answers alike: the figures are in the database.
func (s *Server) audioProgress(w http.ResponseWriter, r *http.Request, c *call) error {
	a, err := s.liveAudio(r, c)
	if err != nil {
		return err
	}
	out := progressJSON{AudioID: a.ID, State: a.State}
	if a.State == narrator.StateProcessed {
		out.Share = ptr(1.0)
	}
	if a.State != narrator.StateUnprocessed {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	prog, err := s.store.SynthesisProgress(r.Context(), a.ID, a.Revision)
	switch {
	case err == nil && prog.Current(a):
		out.UnitsDone, out.UnitsTotal = ptr(prog.UnitsDone), ptr(prog.UnitsTotal)
		out.Share = ptr(math.Round(prog.Share()*1000) / 1000)
		if left, ok := prog.Remaining(s.now()); ok {
			out.ETASeconds = ptr(int(math.Round(left.Seconds())))
		}
		if prog.LiveKey != "" {
			out.LiveURL = s.mediaURL(prog.LiveKey)
			out.LiveMP3URL = s.mediaURL(narrator.LiveMP3Key(prog.LiveKey))
		}
	case err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return err
	case s.queue != nil:
		// Not under way: it waits in the queue, or is between attempts.
		n, queued, err := s.queue.SynthesisQueuePosition(r.Context(), a.ID)
		if err != nil {
			return err
		}
		if queued {
			out.Queued, out.QueuePosition = true, ptr(n)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func ptr[T any](v T) *T { return &v }
