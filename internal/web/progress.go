package web

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/narrator/narrator"
)

// QueuePositioner tells where an audio waits among the synthesis jobs.
type QueuePositioner interface {
	// SynthesisQueuePosition returns the audio's place in the line of
	// synthesis jobs waiting for a worker, 1 for the next; false when no
	// job of the audio waits.
	SynthesisQueuePosition(ctx context.Context, audioID int64) (int, bool, error)
}

// progressJSON is how far an unprocessed audio has got, as the audio page
// and the project page show it and their polling receives it.
type progressJSON struct {
	Queued        bool    `json:"queued"`
	QueuePosition int     `json:"queue_position,omitempty"`
	Started       bool    `json:"started"`
	UnitsDone     int     `json:"units_done"`
	UnitsTotal    int     `json:"units_total"`
	Share         float64 `json:"share"`
	// Percent is Share in whole percent, for the page.
	Percent int `json:"percent"`
	// ETASeconds is the estimated time left; -1 while unknown.
	ETASeconds int `json:"eta_seconds"`
	// LiveURL is the live HLS playlist, once its first segment plays, and
	// LiveMP3URL the same stream as a growing MP3, which the page plays:
	// every browser plays an MP3 as it arrives, while Chromium's own HLS
	// player refuses a playlist that has not ended.
	LiveURL    string `json:"live_url,omitempty"`
	LiveMP3URL string `json:"live_mp3_url,omitempty"`
	// Label says it in words: "Waiting in line, position 3",
	// "12 of 40 sentences · about 21 s left".
	Label string `json:"label"`
}

// progressOf returns the progress of an unprocessed audio, read from the
// database so that any node can answer: its place in the queue, or the
// share of its sentences done with an estimate and its live stream.
func (s *Server) progressOf(ctx context.Context, a *narrator.Audio) (*progressJSON, error) {
	out := &progressJSON{ETASeconds: -1, Label: "Starting…"}
	p, err := s.store.SynthesisProgress(ctx, a.ID, a.Revision)
	switch {
	case err == nil && p.Current(a):
		out.Started, out.UnitsDone, out.UnitsTotal = true, p.UnitsDone, p.UnitsTotal
		out.Share = p.Share()
		out.Percent = int(math.Floor(out.Share * 100))
		out.Label = fmt.Sprintf("%d of %d sentences", p.UnitsDone, p.UnitsTotal)
		if left, ok := p.Remaining(s.now()); ok {
			out.ETASeconds = int(math.Round(left.Seconds()))
			out.Label += " · about " + formatLeft(left) + " left"
		}
		if p.LiveKey != "" && s.mediaURL != nil {
			access, err := s.store.ProjectAccess(ctx, a.ProjectID)
			if err != nil {
				return nil, err
			}
			mediaURL := s.mediaURLs(access, 0)
			out.LiveURL = mediaURL(p.LiveKey)
			out.LiveMP3URL = mediaURL(narrator.LiveMP3Key(p.LiveKey))
		}
	case err != nil && narrator.ErrorCode(err) != narrator.ENOTFOUND:
		return nil, err
	case s.queue != nil:
		n, queued, err := s.queue.SynthesisQueuePosition(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		if queued {
			out.Queued, out.QueuePosition = true, n
			out.Label = fmt.Sprintf("Waiting in line, position %d", n)
		}
	}
	return out, nil
}

// formatLeft says a time left the way a person would: "8 s", "2 min".
func formatLeft(d time.Duration) string {
	switch s := int(math.Round(d.Seconds())); {
	case s < 1:
		return "a moment"
	case s < 90:
		return fmt.Sprintf("%d s", s)
	default:
		return fmt.Sprintf("%d min", int(math.Round(float64(s)/60)))
	}
}
