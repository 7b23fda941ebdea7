package narrator

import (
	"fmt"
	"slices"
	"time"
)

// Effects is what a write of one audio must do besides its own row, decided
// here once for every store: move its project's count of live audios and
// its account's usage, insert its jobs, and tell the webhooks. Stores apply
// it in the write's transaction, in one place each, taking the steps in the
// order Steps gives.
type Effects struct {
	// ProjectID is the audio's project: its count moves, and its account's
	// usage.
	ProjectID int64
	// AudioCount moves the project's count of live audios: +1 for a
	// create, -1 for a delete.
	AudioCount int
	// Queued and MediaBytes move the account's Usage (UsageDelta).
	Queued     int
	MediaBytes int64
	// Synthesize asks for a synthesis of the audio's revision
	// (SynthesizeJob) in fair round Round, which the store sets from the
	// account's usage (FairRound) before it writes anything.
	Synthesize bool
	Round      int64
	// Supersede asks, with Synthesize, that the audio's synthesis jobs
	// still waiting (not running) be removed first: a change to an audio
	// that already existed replaces its queued synthesis instead of adding
	// another, so that 200 updates of one audio queue one job, not 200. A
	// running synthesis finishes, and its stale revision is then dropped.
	Supersede bool
	// DeleteMedia are the keys of files the change leaves unused, to be
	// removed by a DeleteMediaJob.
	DeleteMedia []string
	// Event is the webhook event the change raises (AudioEvent), "" for
	// none.
	Event string
	// PingFeed is set when the change changes what the project's podcast
	// feed shows (FeedChanged): its WebSub hub, if the store pings one,
	// is to hear of it (FeedPing).
	PingFeed bool
}

// ChangeEffects returns the effects of a change of an audio from before to
// after as stored, after holding its ID once it is inserted. before is nil
// for a create or an import; after is deleted for a delete.
//
//   - The project's count moves when the audio becomes live or stops being.
//   - The account's usage moves by UsageDelta.
//   - A live unprocessed audio at a new revision (or a new one) needs a
//     synthesis of that revision, which supersedes any still queued for an
//     audio that was live before.
//   - The keys of before's media that after no longer holds (all of them
//     for a delete) are to be removed.
//   - The webhooks hear of AudioEvent; a create or an import raises none.
//   - The podcast feed's hub hears of a change the feed shows (FeedChanged).
func ChangeEffects(before, after *Audio) Effects {
	e := Effects{ProjectID: after.ProjectID}
	live := func(a *Audio) bool { return a != nil && !a.Deleted }
	switch {
	case !live(before) && live(after):
		e.AudioCount = 1
	case live(before) && !live(after):
		e.AudioCount = -1
	}
	e.Queued, e.MediaBytes = UsageDelta(before, after)
	e.Synthesize = live(after) && after.State == StateUnprocessed && (before == nil || before.Revision != after.Revision)
	e.Supersede = e.Synthesize && live(before)
	if before != nil {
		var kept []string
		if live(after) {
			kept = after.MediaKeys()
		}
		for _, k := range before.MediaKeys() {
			if !slices.Contains(kept, k) {
				e.DeleteMedia = append(e.DeleteMedia, k)
			}
		}
		e.Event = AudioEvent(before, after)
	}
	e.PingFeed = FeedChanged(before, after)
	return e
}

// EffectStep is one step of applying Effects.
type EffectStep string

// The steps of applying Effects, in the one order every store takes them.
// On PostgreSQL a write has locked its audio's row before, and the
// account's row is taken before the project's by every write, so that two
// writes of one account never wait for each other in a circle.
const (
	StepUsage      EffectStep = "usage"       // the account's row: Queued, MediaBytes
	StepAudioCount EffectStep = "audio_count" // the project's row: AudioCount
	StepJobs       EffectStep = "jobs"        // Supersede, then Jobs: the synthesis, the removal of media
	StepDeliveries EffectStep = "deliveries"  // the Event's webhook deliveries and their jobs
	StepPing       EffectStep = "ping"        // PingFeed: the feed's ping job, if the feed has a hub
)

// Steps returns the steps these effects need, in the order stores take
// them: usage, audio count, jobs, deliveries, ping. A step with nothing to do is
// left out.
func (e Effects) Steps() []EffectStep {
	var steps []EffectStep
	if e.Queued != 0 || e.MediaBytes != 0 {
		steps = append(steps, StepUsage)
	}
	if e.AudioCount != 0 {
		steps = append(steps, StepAudioCount)
	}
	if e.Synthesize || len(e.DeleteMedia) > 0 {
		steps = append(steps, StepJobs)
	}
	if e.Event != "" {
		steps = append(steps, StepDeliveries)
	}
	if e.PingFeed {
		steps = append(steps, StepPing)
	}
	return steps
}

// Jobs returns the jobs of the effects of a change to a, as stored with
// its ID: its synthesis, then the removal of the media it no longer holds.
func (e Effects) Jobs(a *Audio) []Job {
	var jobs []Job
	if e.Synthesize {
		jobs = append(jobs, SynthesizeJob{AudioID: a.ID, Revision: a.Revision, Round: e.Round})
	}
	if len(e.DeleteMedia) > 0 {
		jobs = append(jobs, DeleteMediaJob{Keys: e.DeleteMedia})
	}
	return jobs
}

// AudioEventOf returns the event the effects raise for a, as stored after
// the change, at time now; nil if they raise none.
func (e Effects) AudioEventOf(a *Audio, now time.Time) *Event {
	if e.Event == "" {
		return nil
	}
	return &Event{Type: e.Event, ProjectID: a.ProjectID, Audio: a, CreatedAt: now}
}

// PlanDeliveries returns the deliveries of e to those of hooks that want it
// (Webhook.Wants), pending, each with a new message ID. The body is
// rendered once, by render, and only if some endpoint wants the event; every
// delivery carries the very same bytes. Stores insert them, each with its
// WebhookJob, in the transaction of the change.
func PlanDeliveries(e *Event, hooks []*Webhook, render EventBodyFunc) ([]*WebhookDelivery, error) {
	var body []byte
	var out []*WebhookDelivery
	for _, h := range hooks {
		if !h.Wants(e.Type) {
			continue
		}
		if body == nil {
			if render == nil {
				return nil, fmt.Errorf("render %s: the store was opened without an event renderer", e.Type)
			}
			var err error
			if body, err = render(e); err != nil {
				return nil, fmt.Errorf("render %s: %w", e.Type, err)
			}
		}
		d, err := NewDelivery(h, e, body)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
