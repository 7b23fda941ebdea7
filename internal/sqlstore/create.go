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

// insertAudioSQL inserts an audio as the newest of its project: its number
// (seq) is one above the project's highest. The creates of a project are
// serialised (the one writer on SQLite; on PostgreSQL, the account's row,
// which DB.PlanSynthesis locks first), so the read and the insert are one
// step; where they are not, the unique index audios_seq refuses a number
// taken twice.
const insertAudioSQL = `
INSERT INTO audios (` + AudioInsertColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	(SELECT coalesce(max(seq), 0) + 1 FROM audios WHERE project_id = ?))`

const insertMediaSQL = `INSERT INTO media (audio_id, content_type) VALUES (?, ?)`

// CreateAudio is the reference create: the create of a store's
// CreateAudio, with the same outcome and the same rows, jobs and effects,
// one create in one transaction of its own, its effects applied by
// DB.ApplyEffects as every other write's are. The stores' group commits
// and PostgreSQL's plan-ahead are faster ways to the same result; the
// store suite compares each with this one (storetest.RunCreatePaths). A
// store opened with NoGroupCommit creates this way.
func CreateAudio(ctx context.Context, s *Store, a *narrator.Audio) (created bool, err error) {
	if err := a.Validate(); err != nil {
		return false, err
	}
	name := fmt.Sprintf("create audio in project %d", a.ProjectID)
	got, err := WriteV(ctx, s, name, func(tx Tx) (*narrator.Audio, error) {
		got, c, err := createAudio(ctx, s, tx, a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		created = c
		return got, nil
	})
	if err != nil {
		return false, err
	}
	*a = *got
	return created, nil

}

// createAudio does CreateAudio's work in tx: it updates the live audio
// with a's external ID if there is one (UpdateAudio, every article field
// replaced), and inserts a as narrator.PlanCreate makes it otherwise. The
// locks are taken in every write's order: the audio's row, then its
// account's (DB.PlanSynthesis), then its project's (DB.ApplyEffects).
func createAudio(ctx context.Context, s *Store, tx Tx, a *narrator.Audio) (*narrator.Audio, bool, error) {
	if _, err := ProjectByID(ctx, tx, a.ProjectID); err != nil {
		return nil, false, err
	}
	if a.ExternalID != "" {
		cur, err := AudioByExternalID(ctx, tx, a.ProjectID, a.ExternalID, s.db.ForUpdate())
		switch {
		case err == nil:
			if err := LoadMedia(ctx, s.db, tx, cur); err != nil {
				return nil, false, err
			}
			got, err := UpdateAudio(ctx, s, tx, cur, a.Replacement(), func(adds bool) (int64, error) {
				return s.db.PlanSynthesis(ctx, tx, a.ProjectID, adds, true)
			})
			return got, false, err
		case narrator.ErrorCode(err) != narrator.ENOTFOUND:
			return nil, false, err
		}
	}
	round, err := s.db.PlanSynthesis(ctx, tx, a.ProjectID, true, true)
	if err != nil {
		return nil, false, err
	}
	plan := narrator.PlanCreate(a, s.now())
	got := plan.Next
	if got.ID, err = tx.Insert(ctx, insertAudioSQL, got.ProjectID, NullString(got.ExternalID), got.Title, got.Body,
		got.Author, got.ArticleURL, got.Metadata, got.State, got.Error, got.Revision, got.DurationMS,
		got.CreatedAt, got.UpdatedAt, got.ProjectID); err != nil {
		return nil, false, fmt.Errorf("insert audio: %w", err)
	}
	for _, ct := range narrator.MediaTypes() {
		m := narrator.Media{AudioID: got.ID, ContentType: ct}
		if m.ID, err = tx.Insert(ctx, insertMediaSQL, got.ID, ct); err != nil {
			return nil, false, fmt.Errorf("insert %s media of audio %d: %w", ct, got.ID, err)
		}
		got.Media = append(got.Media, m)
	}
	if err := InsertNewPublications(ctx, s.db, tx, &got); err != nil {
		return nil, false, err
	}
	plan.Effects.Round = round
	if err := s.db.ApplyEffects(ctx, tx, &got, plan.Effects); err != nil {
		return nil, false, err
	}
	return &got, true, nil
}
