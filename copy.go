package narrator

import (
	"cmp"
	"time"
)

// Export is everything a store holds besides its audios, in the form in
// which another store imports it with the same IDs, so that API clients,
// keys and dashboard sign-ins keep working after a move. Sessions are left
// out: users sign in again.
type Export struct {
	Accounts []*Account
	APIKeys  []*ExportedAPIKey
	// Projects carry AudioCount as the exporting store counts it; an
	// importing store counts the audios it imports instead.
	Projects       []*Project
	Users          []*User // with their password hashes
	Pronunciations []*Pronunciation
	// Feeds are the podcast feeds with their tokens, so that subscribers'
	// URLs keep working. A target that has a feed for a project already
	// keeps its own.
	Feeds []*Feed
	// Webhooks are the projects' endpoints with their secrets, so that
	// receivers keep verifying; their deliveries are not copied.
	Webhooks []*Webhook
	// Sources are rss projects' feeds with their settings; an importing
	// store gives them a fresh state, so that its first read follows the
	// backfill rule and updates, rather than narrates again, the items
	// whose audios were copied.
	Sources []*Source
	// LastIDs are the highest IDs the store has given, deleted rows'
	// included.
	LastIDs LastIDs
}

// ExportedAPIKey is an API key with the hash under which it is stored,
// which is what authenticates it.
type ExportedAPIKey struct {
	APIKey
	Hash []byte
}

// LastIDs holds, for each kind of row, the highest ID a store has ever
// given, whether or not the row still exists; 0 when it gave none. A store
// that imports rows moves its own counters past them, so that no new row
// ever reuses the ID of a copied row, or of one deleted before the copy.
type LastIDs struct {
	Account, APIKey, Project, Audio, Media, User, Pronunciation, Webhook, Source int64
}

// CheckCopyTarget decides whether the rows of a source store, exported as
// src, may be copied into a target store whose own export is dst. The
// target may hold nothing but an earlier copy of the source, perhaps moved
// on since (new keys, projects, users or rules of the copied accounts):
//
//   - every account of the target is an account of the source, with the
//     same ID, name and creation time;
//   - every API key, project, user, pronunciation rule and webhook of the target
//     whose ID is also in the source is the same row: the same account (or
//     project, for a rule) and creation time, and for a key the same hash.
//
// An empty target passes. Otherwise it returns an ECONFLICT *Error naming
// the first row in the way, and nothing may be written.
func CheckCopyTarget(src, dst *Export) error {
	accounts := byID(src.Accounts, func(a *Account) int64 { return a.ID })
	for _, a := range dst.Accounts {
		s, ok := accounts[a.ID]
		if !ok || s.Name != a.Name || !s.CreatedAt.Equal(a.CreatedAt) {
			return Errorf(ECONFLICT, "the target already holds other data: its account %d (%q, created %s) is not an account of the source",
				a.ID, a.Name, a.CreatedAt.Format(time.RFC3339))
		}
	}
	return cmp.Or(
		sameRows("API key", src.APIKeys, dst.APIKeys, func(k *ExportedAPIKey) int64 { return k.ID }, func(s, d *ExportedAPIKey) bool {
			return s.AccountID == d.AccountID && s.CreatedAt.Equal(d.CreatedAt) && string(s.Hash) == string(d.Hash)
		}),
		sameRows("project", src.Projects, dst.Projects, func(p *Project) int64 { return p.ID }, func(s, d *Project) bool {
			return s.AccountID == d.AccountID && s.CreatedAt.Equal(d.CreatedAt)
		}),
		sameRows("user", src.Users, dst.Users, func(u *User) int64 { return u.ID }, func(s, d *User) bool {
			return s.AccountID == d.AccountID && s.CreatedAt.Equal(d.CreatedAt)
		}),
		sameRows("pronunciation rule", src.Pronunciations, dst.Pronunciations, func(p *Pronunciation) int64 { return p.ID },
			func(s, d *Pronunciation) bool { return s.ProjectID == d.ProjectID && s.CreatedAt.Equal(d.CreatedAt) }),
		sameRows("webhook", src.Webhooks, dst.Webhooks, func(h *Webhook) int64 { return h.ID }, func(s, d *Webhook) bool {
			return s.ProjectID == d.ProjectID && s.CreatedAt.Equal(d.CreatedAt)
		}),
	)
}

// CheckCopiedAudio returns an ECONFLICT *Error unless have, the audio a
// target store holds under the ID of a copied audio a, is that same audio:
// of the same project and created at the same time. Its other fields may
// differ, since the target may have updated, processed or deleted it after
// an earlier copy. Stores call it for each imported audio they already hold.
func CheckCopiedAudio(have, a *Audio) error {
	if have.ProjectID != a.ProjectID || !have.CreatedAt.Equal(a.CreatedAt) {
		return otherRow("audio", a.ID)
	}
	return nil
}

// AwaitsSynthesis reports whether a copied audio must be queued for
// synthesis on the store it is copied into: whether it is live and
// unprocessed.
func (a *Audio) AwaitsSynthesis() bool {
	return !a.Deleted && a.State == StateUnprocessed
}

func otherRow(kind string, id int64) *Error {
	return Errorf(ECONFLICT, "the target already holds other data: its %s %d is not the source's %s %d", kind, id, kind, id)
}

// sameRows returns otherRow(kind, …) for the first row of dst whose ID
// src also holds, as a row that same says is another.
func sameRows[T any](kind string, src, dst []T, id func(T) int64, same func(s, d T) bool) error {
	rows := byID(src, id)
	for _, d := range dst {
		if s, ok := rows[id(d)]; ok && !same(s, d) {
			return otherRow(kind, id(d))
		}
	}
	return nil
}

// byID indexes rows by their IDs.
func byID[T any](rows []T, id func(T) int64) map[int64]T {
	m := make(map[int64]T, len(rows))
	for _, r := range rows {
		m[id(r)] = r
	}
	return m
}
