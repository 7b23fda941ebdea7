package narrator

import (
	"fmt"
	"time"
)

// Error codes of the per-account limits.
const (
	// EQUEUEFULL: the account has as many audios waiting for or under
	// synthesis as it may; try again when some are done.
	EQUEUEFULL = "queue_full"
	// EQUOTA: the account's published media fill its storage quota; delete
	// audios to make room.
	EQUOTA = "quota_exceeded"
	// ERATELIMITED: the caller made more requests of a kind than it may
	// for now; try again after the time the answer says.
	ERATELIMITED = "rate_limited"
)

// MaxAudioDuration caps the length of one audio, pauses included. The
// longest body (MaxBodyChars) read at a normal rate lasts about two hours;
// a body of long SSML breaks or very slow prosody would otherwise make many
// hours of audio and gigabytes of files.
const MaxAudioDuration = 3 * time.Hour

// LengthCheck is the one check of how long an audio may be: of its text,
// estimated before any speech is made (Text), and of its speech, measured
// as it is made (Speech). The API, the dashboard, the sources' imports and
// the pipeline all check through one; speak.LengthCheck makes it with the
// speech package's estimate.
type LengthCheck struct {
	// Estimate returns a length that the audio of an article will not
	// fall short of (speak.Estimate).
	Estimate func(title, author, body string) time.Duration
	// Max caps the length; MaxAudioDuration when 0.
	Max time.Duration
}

// Text returns an EINVALID *Error naming the body if the audio of an
// article with this title, author and body would be longer than Max, by
// Estimate.
func (c LengthCheck) Text(title, author, body string) error {
	return checkDuration(c.Estimate(title, author, body), c.Max)
}

// Speech returns an EINVALID *Error naming the body if speech of length
// d, measured while the audio is made, is longer than Max.
func (c LengthCheck) Speech(d time.Duration) error { return checkDuration(d, c.Max) }

// checkDuration returns an EINVALID *Error naming the body if an audio of
// length d is longer than max (MaxAudioDuration when max is 0).
func checkDuration(d, max time.Duration) error {
	if max <= 0 {
		max = MaxAudioDuration
	}
	if d <= max {
		return nil
	}
	return Errorf(EINVALID, "body would make %s of audio or more; at most %s is allowed (count pauses too)",
		formatHours(d), formatHours(max))
}

// formatHours writes d as hours and minutes, for messages.
func formatHours(d time.Duration) string {
	d = d.Truncate(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return fmt.Sprintf("%d min", m)
	case m == 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// Limits bound what one account may hold. Zero means no limit.
type Limits struct {
	// MaxQueued bounds the account's audios waiting for or under synthesis
	// (state unprocessed), over all its projects.
	MaxQueued int
	// MaxMediaBytes bounds the bytes of the account's published media
	// (Media.Bytes of its live audios).
	MaxMediaBytes int64
	// MaxSources bounds the account's feeds (Source), over all its
	// projects: each is read on schedule at the service's cost.
	MaxSources int
}

// CheckSources returns the error that refuses a new feed of an account that
// has n feeds already: ECONFLICT when that is MaxSources or more. Every
// store calls it in the transaction of the create.
func (l Limits) CheckSources(n int) error {
	if l.MaxSources > 0 && n >= l.MaxSources {
		return Errorf(ECONFLICT, "the account has %d feeds, the most it may have: remove a feed to add another", l.MaxSources)
	}
	return nil
}

// Usage is what an account holds against its Limits, as a store keeps it
// beside the account and reads it in the transaction of a change.
type Usage struct {
	// Queued counts the account's live audios waiting for or under
	// synthesis (state unprocessed).
	Queued int
	// MediaBytes is the size of the account's published media.
	MediaBytes int64
	// NextRound is the fair-scheduling round after the account's last
	// queued synthesis (FairRound).
	NextRound int64
}

// UsageDelta returns how a change of an audio, from before to after as
// stored, moves its account's Usage: its queued count and its media bytes.
// before is nil for a create or an import, after is deleted for a delete.
// Every store applies it, in the transaction of each change, so that
// checking a limit reads one row instead of counting audios.
func UsageDelta(before, after *Audio) (queued int, mediaBytes int64) {
	count := func(a *Audio) (int, int64) {
		if a == nil || a.Deleted {
			return 0, 0
		}
		q := 0
		if a.State == StateUnprocessed {
			q = 1
		}
		return q, a.MediaBytes()
	}
	q0, b0 := count(before)
	q1, b1 := count(after)
	return q1 - q0, b1 - b0
}

// CheckSynthesis returns the error that refuses a change which queues a
// synthesis for an account using u: EQUOTA when its media fill
// MaxMediaBytes, EQUEUEFULL when it already has MaxQueued audios waiting
// and the change adds one (adds is false when the audio was unprocessed
// already, so the queue does not grow). Every store calls it, in the
// transaction of the change, before it writes anything.
func (l Limits) CheckSynthesis(u Usage, adds bool) error {
	if l.MaxMediaBytes > 0 && u.MediaBytes >= l.MaxMediaBytes {
		return Errorf(EQUOTA, "the account's audio files take %d bytes, its quota is %d: delete audios to make room", u.MediaBytes, l.MaxMediaBytes)
	}
	if adds && l.MaxQueued > 0 && u.Queued >= l.MaxQueued {
		return Errorf(EQUEUEFULL, "the account has %d audios waiting for synthesis, the most it may have: try again when some are done", l.MaxQueued)
	}
	return nil
}

// FairRound returns the scheduling round of a new synthesis job of an
// account, so that accounts take turns: jobs start in order of their
// rounds, then of their insertion. head is the round of the job that a
// worker would take next (0 when none waits), u the account's usage before
// this job.
//
// A job goes to the head's round, after the account's own jobs still
// waiting, one round each: when account A has a hundred jobs waiting and
// account B queues one, B's starts after at most one more of A's (the one
// holding the head's round, inserted first). The account's next round
// counts only as far as it has audios queued, so an account whose backlog
// is done is not held back for it.
//
// The store keeps the returned round plus one as the account's
// Usage.NextRound, in the same transaction.
func FairRound(head int64, u Usage) int64 {
	ahead := min(max(u.NextRound-head, 0), int64(u.Queued))
	return head + ahead
}

// MediaBytes returns the size of the audio's published media: what it
// counts against its account's Limits.MaxMediaBytes.
func (a *Audio) MediaBytes() int64 {
	var n int64
	for _, m := range a.Media {
		n += m.Bytes
	}
	return n
}
