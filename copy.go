package narrator

import "time"

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
	keys := byID(src.APIKeys, func(k *ExportedAPIKey) int64 { return k.ID })
	for _, k := range dst.APIKeys {
		if s, ok := keys[k.ID]; ok && (s.AccountID != k.AccountID || !s.CreatedAt.Equal(k.CreatedAt) || string(s.Hash) != string(k.Hash)) {
			return otherRow("API key", k.ID)
		}
	}
	projects := byID(src.Projects, func(p *Project) int64 { return p.ID })
	for _, p := range dst.Projects {
		if s, ok := projects[p.ID]; ok && (s.AccountID != p.AccountID || !s.CreatedAt.Equal(p.CreatedAt)) {
			return otherRow("project", p.ID)
		}
	}
	users := byID(src.Users, func(u *User) int64 { return u.ID })
	for _, u := range dst.Users {
		if s, ok := users[u.ID]; ok && (s.AccountID != u.AccountID || !s.CreatedAt.Equal(u.CreatedAt)) {
			return otherRow("user", u.ID)
		}
	}
	rules := byID(src.Pronunciations, func(p *Pronunciation) int64 { return p.ID })
	for _, p := range dst.Pronunciations {
		if s, ok := rules[p.ID]; ok && (s.ProjectID != p.ProjectID || !s.CreatedAt.Equal(p.CreatedAt)) {
			return otherRow("pronunciation rule", p.ID)
		}
	}
	hooks := byID(src.Webhooks, func(h *Webhook) int64 { return h.ID })
	for _, h := range dst.Webhooks {
		if s, ok := hooks[h.ID]; ok && (s.ProjectID != h.ProjectID || !s.CreatedAt.Equal(h.CreatedAt)) {
			return otherRow("webhook", h.ID)
		}
	}
	return nil
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

// byID indexes rows by their IDs.
func byID[T any](rows []T, id func(T) int64) map[int64]T {
	m := make(map[int64]T, len(rows))
	for _, r := range rows {
		m[id(r)] = r
	}
	return m
}
