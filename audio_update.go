package narrator

import (
	"maps"
	"time"
)

// AudioUpdate holds the fields of an update to an audio; a nil field means
// "keep the stored value". Metadata is replaced as a whole, and only when
// MetadataSet is true, so that "metadata omitted" (keep) differs from
// "metadata: {}" (clear).
type AudioUpdate struct {
	Title      *string
	Body       *string
	Author     *string
	ArticleURL *string
	// ExternalID, when set to "", removes the audio's external ID.
	ExternalID *string
	// Metadata replaces the stored metadata when MetadataSet is true; a nil
	// map then clears it.
	Metadata    map[string]string
	MetadataSet bool
}

// Replacement returns the update that a create with a's external ID makes
// to the live audio already holding it: every article field (title, body,
// author, article_url and metadata) is replaced, the external ID is kept.
func (a *Audio) Replacement() AudioUpdate {
	title, body, author, articleURL := a.Title, a.Body, a.Author, a.ArticleURL
	return AudioUpdate{
		Title: &title, Body: &body, Author: &author, ArticleURL: &articleURL,
		Metadata: a.Metadata, MetadataSet: true,
	}
}

// CreatePlan is what creating an audio comes to.
type CreatePlan struct {
	// Next is the audio as the store inserts it.
	Next Audio
	// Effects are what the create does besides its row: it counts in its
	// project and its account, and needs a synthesis (its Round set by the
	// store). Stores apply them once Next has its ID.
	Effects Effects
}

// PlanCreate returns the plan of storing a, a valid audio that no live
// audio of its project holds the external ID of, at time now: Next is a
// unprocessed at revision 1, without error, duration or media, with empty
// rather than nil metadata. Stores insert it as it is, with one media of each
// of MediaTypes (without keys), and apply the plan's Effects, all in one
// transaction. A create whose external ID a live audio holds is an update of
// that audio instead, with a.Replacement().
func PlanCreate(a *Audio, now time.Time) CreatePlan {
	next := *a
	next.ID, next.Deleted, next.Media = 0, false, nil
	next.State, next.Error, next.Revision, next.DurationMS = StateUnprocessed, "", 1, 0
	next.CreatedAt, next.UpdatedAt = now, now
	next.Metadata = maps.Clone(a.Metadata)
	if next.Metadata == nil {
		next.Metadata = map[string]string{}
	}
	return CreatePlan{Next: next, Effects: ChangeEffects(nil, &next)}
}

// UpdatePlan is what applying an update to a stored audio comes to. Stores
// persist Next as it is and enqueue a synthesis of Next.Revision when
// Resynthesize is set.
type UpdatePlan struct {
	// Next is the audio after the update, validated, with UpdatedAt moved
	// if anything changed.
	Next Audio
	// Changed reports whether anything stored differs; when false, nothing
	// is to be written.
	Changed bool
	// Resynthesize reports whether what is spoken changed: Next is then
	// unprocessed at a new revision, without an error, and needs new speech.
	// Its media keep their keys until the new speech is published.
	Resynthesize bool
	// ExternalIDChanged reports whether Next takes a new, non-empty external
	// ID, which the store must check is free among the project's live audios.
	ExternalIDChanged bool
	// Effects are what the update does besides its row (ChangeEffects):
	// with Resynthesize, a synthesis of Next's revision (its Round set by the
	// store) and the audio.updated event.
	Effects Effects
}

// PlanUpdate applies u to cur, a live audio as stored, at time now. It is the
// one rule every store follows for updates: nil fields keep their values,
// the merged audio must be valid, and only a change to the title, body or
// author needs new speech. It returns an EINVALID *Error if the result is not
// valid.
func PlanUpdate(cur *Audio, u AudioUpdate, now time.Time) (UpdatePlan, error) {
	next := *cur
	next.Media = append([]Media(nil), cur.Media...)
	for _, f := range []struct {
		dst *string
		src *string
	}{
		{&next.Title, u.Title}, {&next.Body, u.Body}, {&next.Author, u.Author},
		{&next.ArticleURL, u.ArticleURL}, {&next.ExternalID, u.ExternalID},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if u.MetadataSet {
		next.Metadata = maps.Clone(u.Metadata)
		if next.Metadata == nil {
			next.Metadata = map[string]string{}
		}
	}
	if err := next.Validate(); err != nil {
		return UpdatePlan{}, err
	}
	plan := UpdatePlan{Resynthesize: !cur.SpokenEqual(&next)}
	plan.Changed = plan.Resynthesize || next.ExternalID != cur.ExternalID || next.ArticleURL != cur.ArticleURL ||
		!maps.Equal(next.Metadata, cur.Metadata)
	if !plan.Changed {
		plan.Next = *cur
		return plan, nil
	}
	plan.ExternalIDChanged = next.ExternalID != cur.ExternalID && next.ExternalID != ""
	next.UpdatedAt = now
	if plan.Resynthesize {
		next.Resynthesize(now)
	}
	plan.Next = next
	plan.Effects = ChangeEffects(cur, &next)
	return plan, nil
}

// Resynthesize marks a as needing new speech at time now: unprocessed, at
// the next revision, without an error. Stores enqueue a SynthesizeJob for
// the new revision in the same transaction. Its media keep their keys until
// the new speech is published, so listeners hear the old version meanwhile.
func (a *Audio) Resynthesize(now time.Time) {
	a.State, a.Error, a.Revision, a.UpdatedAt = StateUnprocessed, "", a.Revision+1, now
}

// MediaKeys returns the keys of the audio's published media files.
func (a *Audio) MediaKeys() []string {
	var keys []string
	for _, m := range a.Media {
		if m.Key != "" {
			keys = append(keys, m.Key)
		}
	}
	return keys
}

// PlanFail reports whether the given revision of a, as stored, is to be
// marked failed. It is not if a is deleted or at another revision, nor if
// it is processed: a duplicate job succeeded, and its result stands. Stores
// then change nothing and report no error.
func PlanFail(a *Audio, revision int) bool {
	return !a.Deleted && a.Revision == revision && a.State != StateProcessed
}

// Rendering is what one synthesis of an audio stored in the media store:
// its media by content type, with their sizes, and its length. A renderer
// returns it and the stores finish it (PlanFinish).
type Rendering struct {
	Keys     map[string]string // content type → media key
	Bytes    map[string]int64  // content type → size in bytes of the object at Keys
	Duration time.Duration
}

// FinishPlan is what finishing a revision of an audio comes to.
type FinishPlan struct {
	// Media are the audio's media whose key changes, with their new Key
	// and Bytes; stores set those and mark the audio processed.
	Media []Media
	// Effects are what finishing does besides the audio's rows
	// (ChangeEffects): the account's usage, the removal of the keys the
	// new ones replace (DeleteMedia), the audio.processed event.
	Effects Effects
}

// PlanFinish checks that the given revision of a, as stored with its media,
// may be published with r, and returns what the store writes. It returns
// an ECONFLICT *Error, and nothing may be written, if a is deleted, at
// another revision, or already processed at this revision: a result is
// published once, and a stale or duplicate rendering is discarded by its
// worker. Keys for content types a has no media of, empty keys, keys
// without a positive size, and a negative duration are an EINVALID *Error.
func PlanFinish(a *Audio, revision int, r Rendering) (FinishPlan, error) {
	switch {
	case a.Deleted:
		return FinishPlan{}, Errorf(ECONFLICT, "audio %d is deleted", a.ID)
	case a.Revision != revision:
		return FinishPlan{}, Errorf(ECONFLICT, "audio %d is at revision %d", a.ID, a.Revision)
	case a.State == StateProcessed:
		return FinishPlan{}, Errorf(ECONFLICT, "audio %d revision %d is already published", a.ID, revision)
	case r.Duration < 0:
		return FinishPlan{}, Errorf(EINVALID, "negative duration %v", r.Duration)
	}
	for ct, key := range r.Keys {
		if _, ok := a.MediaOf(ct); !ok {
			return FinishPlan{}, Errorf(EINVALID, "audio %d has no %q media", a.ID, ct)
		}
		if key == "" {
			return FinishPlan{}, Errorf(EINVALID, "empty key for %s media", ct)
		}
		if r.Bytes[ct] <= 0 {
			return FinishPlan{}, Errorf(EINVALID, "no size for %s media %q", ct, key)
		}
	}
	var plan FinishPlan
	for _, m := range a.Media {
		key, ok := r.Keys[m.ContentType]
		if !ok || key == m.Key {
			continue
		}
		m.Key, m.Bytes = key, r.Bytes[m.ContentType]
		plan.Media = append(plan.Media, m)
	}
	next := plan.Apply(a, r.Duration.Milliseconds(), a.UpdatedAt)
	plan.Effects = ChangeEffects(a, &next)
	return plan, nil
}

// Apply returns a, as stored before the plan, as the plan finishes it with
// its duration at time now: processed, without an error, its media's keys
// set. Stores tell webhooks of this audio.
func (p FinishPlan) Apply(a *Audio, durationMS int64, now time.Time) Audio {
	next := *a
	next.Media = append([]Media(nil), a.Media...)
	for _, m := range p.Media {
		for i := range next.Media {
			if next.Media[i].ID == m.ID {
				next.Media[i].Key, next.Media[i].Bytes = m.Key, m.Bytes
			}
		}
	}
	next.State, next.Error, next.DurationMS, next.UpdatedAt = StateProcessed, "", durationMS, now
	return next
}

// DeletePlan is what deleting a live audio comes to.
type DeletePlan struct {
	// Next is the audio as deleted, its media kept for the event.
	Next Audio
	// Effects are what the delete does besides its row: it leaves its
	// project's count and its account's usage, its media files are to be
	// removed, and the webhooks hear audio.deleted.
	Effects Effects
}

// PlanDelete returns the plan of deleting a, a live audio as stored with
// its media.
func PlanDelete(a *Audio) DeletePlan {
	next := *a
	next.Deleted = true
	return DeletePlan{Next: next, Effects: ChangeEffects(a, &next)}
}

// Failed returns a as FailAudio stores it at time now: failed, with the
// message for the publisher. Stores apply ChangeEffects(a, &failed).
func (a *Audio) Failed(message string, now time.Time) Audio {
	next := *a
	next.State, next.Error, next.UpdatedAt = StateFailed, message, now
	return next
}
