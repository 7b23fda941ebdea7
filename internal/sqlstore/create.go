package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/narrator/narrator"
)

// MaxCreateGroup caps the creates of one group, whose transaction holds
// the writer (SQLite) or its accounts' rows (PostgreSQL) for its whole
// length.
const MaxCreateGroup = 128

// AudioInsertColumns are the columns a create inserts into audios, in
// the order both stores bind them.
const AudioInsertColumns = `project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, seq`

// CreateCall is one CreateAudio call in a store's group of creates.
type CreateCall struct {
	Ctx   context.Context
	Audio *narrator.Audio
	// KeyHash, if set, is the hash of an API key that must be a live key
	// of the account of Audio's project: a group checks it as it creates,
	// and marks the call to run alone if it is not.
	KeyHash []byte
	// Created and Err are the outcome, set by the group.
	Created bool
	Err     error
	// Alone asks the caller to create the audio in a transaction of its
	// own after the group, its outcome unset.
	Alone bool
}

// Fail sets the call's error, naming its project.
func (c *CreateCall) Fail(err error) {
	c.Err = fmt.Errorf("create audio in project %d: %w", c.Audio.ProjectID, err)
}

// Creates is a store's line of CreateAudio calls, committed in groups of
// at most MaxCreateGroup. NewCreates makes one.
type Creates struct {
	group Group[*CreateCall]
}

// NewCreates returns an empty line.
func NewCreates() *Creates {
	return &Creates{group: Group[*CreateCall]{Max: MaxCreateGroup}}
}

// Waiting returns how many creates wait in line for a group.
func (l *Creates) Waiting() int { return l.group.Waiting() }

// Create validates a, then puts it in line, with the hash of the API key
// it is made with, if any (CreateCall.KeyHash), and returns its call once a
// group holding it has run (Group.Do): run is the store's group. A call
// whose context has ended when its group starts fails alone (Live).
func (l *Creates) Create(ctx context.Context, a *narrator.Audio, keyHash []byte, run func(group []*CreateCall, more func() []*CreateCall)) (*CreateCall, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	c := &CreateCall{Ctx: ctx, Audio: a, KeyHash: keyHash}
	if err := l.group.Do(c, run); err != nil {
		return nil, fmt.Errorf("create audio in project %d: %w", a.ProjectID, err)
	}
	return c, nil
}

// Live fails the calls whose context has ended and returns the others.
func Live(calls []*CreateCall) []*CreateCall {
	var live []*CreateCall
	for _, c := range calls {
		if err := c.Ctx.Err(); err != nil {
			c.Fail(err)
			continue
		}
		live = append(live, c)
	}
	return live
}

// GroupAccount is one account's usage in a group of creates: as the
// group's creates so far leave it, and the changes not yet written.
type GroupAccount struct {
	ID    int64
	Usage narrator.Usage
	// Queued and Bytes are the changes to write; Changed tells whether
	// Usage.NextRound is one.
	Queued  int
	Bytes   int64
	Changed bool
}

// PlanCreate plans the create of a in a group, against the account's
// usage as the group's earlier creates leave it: it refuses it if the
// account is over its limits (narrator.Limits.CheckSynthesis), and
// returns the audio and its effects (narrator.PlanCreate), its synthesis
// in its fair round after the queue's head. Count records it once its
// rows are written.
func (a *GroupAccount) PlanCreate(limits narrator.Limits, head int64, audio *narrator.Audio, now time.Time) (narrator.Audio, narrator.Effects, error) {
	if err := limits.CheckSynthesis(a.Usage, true); err != nil {
		return narrator.Audio{}, narrator.Effects{}, err
	}
	plan := narrator.PlanCreate(audio, now)
	plan.Effects.Round = narrator.FairRound(head, a.Usage)
	return plan.Next, plan.Effects, nil
}

// Count records a planned create, whose effects are eff, in the account's
// usage.
func (a *GroupAccount) Count(eff narrator.Effects) {
	a.Usage.NextRound = eff.Round + 1
	a.Usage.Queued += eff.Queued
	a.Usage.MediaBytes += eff.MediaBytes
	a.Queued += eff.Queued
	a.Bytes += eff.MediaBytes
	a.Changed = true
}
