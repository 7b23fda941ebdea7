package narrator

import (
	"path"
	"time"
)

// LivePlaylistName is the file name of the live playlist that a rendering
// stores beside its segments: an HLS EVENT playlist re-written after every
// segment, which ends, when the audio is done, listing the segments of the
// final VOD playlist. Players can start on it once synthesis has begun.
const LivePlaylistName = "live.m3u8"

// MediaMP3Name is the file name of the MP3 in a rendering's folder; the
// media server finds a folder's audio by it.
const MediaMP3Name = "audio.mp3"

// LiveMP3Name is the file name, beside a live playlist, under which the
// media server sends the live stream as one growing MP3, for players
// that cannot play a live HLS stream (Chromium, Firefox): the MP3 frames
// of the segments, each as soon as it is stored, until the stream ends.
// No object is stored under it.
const LiveMP3Name = "live.mp3"

// LiveMP3Key returns the key of the growing MP3 beside the live playlist
// at liveKey.
func LiveMP3Key(liveKey string) string {
	return path.Join(path.Dir(liveKey), LiveMP3Name)
}

// MediaIsLive reports whether the media at key changes after it is first
// written, so that it must not be cached: a live playlist, or the growing
// MP3 beside it. Every other media object is written once and never
// changes.
func MediaIsLive(key string) bool {
	base := path.Base(key)
	return base == LivePlaylistName || base == LiveMP3Name
}

// RenderProgress is how far a rendering has got, as the renderer reports
// it while it works.
type RenderProgress struct {
	// UnitsDone counts the synthesis units (sentences) written to the
	// audio so far, in reading order, out of UnitsTotal.
	UnitsDone, UnitsTotal int
	// LiveKey is the media key of the live playlist; "" until its first
	// segment is stored.
	LiveKey string
}

// SynthesisProgress is the progress of the attempt synthesising a revision
// of an audio, as stores keep it for every node to read.
type SynthesisProgress struct {
	Revision int
	RenderProgress
	// StartedAt is when the attempt began; UpdatedAt when it last
	// reported.
	StartedAt, UpdatedAt time.Time
}

// ProgressReportInterval is how often, at most, a synthesis attempt writes
// its progress to the database, beyond the report of its live playlist's
// first segment, which is written at once.
const ProgressReportInterval = 250 * time.Millisecond

// Current reports whether p describes the synthesis of a as it is now: a
// is live, unprocessed, and at p's revision. Stale progress (of an earlier
// revision, or of an audio since processed or failed) means nothing.
func (p SynthesisProgress) Current(a *Audio) bool {
	return !a.Deleted && a.State == StateUnprocessed && p.Revision == a.Revision
}

// Share returns the fraction of the units done, from 0 to 1.
func (p SynthesisProgress) Share() float64 {
	if p.UnitsTotal <= 0 {
		return 0
	}
	return min(1, float64(p.UnitsDone)/float64(p.UnitsTotal))
}

// Remaining estimates the time left at now from the pace so far: the time
// since StartedAt per unit done, for the units left. It reports false
// while no unit is done, when there is no pace to go by.
func (p SynthesisProgress) Remaining(now time.Time) (time.Duration, bool) {
	if p.UnitsDone <= 0 || p.UnitsTotal <= 0 {
		return 0, false
	}
	left := max(0, p.UnitsTotal-p.UnitsDone)
	spent := max(0, now.Sub(p.StartedAt))
	return spent * time.Duration(left) / time.Duration(p.UnitsDone), true
}
