package narrator

import (
	"time"
)

// Publication states: whether an audio reaches anonymous listeners (the
// embedded player, podcast feeds). The account sees every audio whatever
// its state.
const (
	// PublicationPublished audios are shown to listeners once processed.
	// It is the state of every audio unless its publisher chose another.
	PublicationPublished = "published"
	// PublicationDraft audios wait for their publisher.
	PublicationDraft = "draft"
	// PublicationScheduled audios become published at PublishAt.
	PublicationScheduled = "scheduled"
)

// Publication is the publisher's decision about one audio.
type Publication struct {
	AudioID int64
	State   string // PublicationPublished, PublicationDraft or PublicationScheduled
	// PublishAt is when a scheduled audio becomes published; zero for the
	// other states.
	PublishAt time.Time
	UpdatedAt time.Time // when the decision was last changed; zero if never
}

// DefaultPublication is the publication of an audio whose publisher never
// decided: published, as every audio was before publication states
// existed, so v3 clients see no change.
func DefaultPublication(audioID int64) Publication {
	return Publication{AudioID: audioID, State: PublicationPublished}
}

// Validate checks a publication as a publisher asks for it: a known
// state, and a publish_at for a schedule only. A publish_at already past
// is allowed: the audio is published at once.
func (p *Publication) Validate() error {
	switch p.State {
	case PublicationPublished, PublicationDraft:
		if !p.PublishAt.IsZero() {
			return Errorf(EINVALID, "publish_at is only for the state %q", PublicationScheduled)
		}
	case PublicationScheduled:
		if p.PublishAt.IsZero() {
			return Errorf(EINVALID, "publish_at is required to schedule an audio")
		}
		if y := p.PublishAt.Year(); y < 2000 || y > 9999 {
			return Errorf(EINVALID, "publish_at must be a time between the years 2000 and 9999")
		}
	default:
		return Errorf(EINVALID, "state must be %q, %q or %q", PublicationPublished, PublicationDraft, PublicationScheduled)
	}
	return nil
}

// Public reports whether the audio is published at now: published, or
// scheduled for now or earlier. A schedule needs no job to come due, so
// every node agrees on the moment and nothing runs twice in a cluster.
func (p Publication) Public(now time.Time) bool {
	switch p.State {
	case PublicationPublished:
		return true
	case PublicationScheduled:
		return !p.PublishAt.IsZero() && !now.Before(p.PublishAt)
	}
	return false
}

// Effective returns the publication as it stands at now: a schedule that
// came due is published, keeping its PublishAt as the moment it was.
func (p Publication) Effective(now time.Time) Publication {
	if p.State == PublicationScheduled && p.Public(now) {
		p.State = PublicationPublished
	}
	return p
}

// Listed reports whether anonymous listeners may reach a at now: a live
// audio whose publication p is public. The embedded player, its status
// and live stream, and the podcast feeds show nothing else.
func Listed(a *Audio, p Publication, now time.Time) bool {
	return a != nil && !a.Deleted && p.AudioID == a.ID && p.Public(now)
}

// PublishedAt returns when an audio created at created, whose publication
// is p, became public, as its podcast feed item is dated when its article
// gives no date: when a schedule came due, when its publisher last
// published it, or, for an audio published from the start, its creation.
// An audio not public now has no such time; it returns created.
func (p Publication) PublishedAt(created time.Time) time.Time {
	var at time.Time
	switch p.State {
	case PublicationScheduled:
		at = p.PublishAt
	case PublicationPublished:
		at = p.UpdatedAt
	}
	if at.After(created) {
		return at
	}
	return created
}
