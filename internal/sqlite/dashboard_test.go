package sqlite

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// dashFixture is a store with a clock, an account and a project.
type dashFixture struct {
	store   *Store
	rec     *storetest.Recorder
	now     time.Time
	account *narrator.Account
	project *narrator.Project
}

func newDashFixture(t *testing.T) *dashFixture {
	t.Helper()
	f := &dashFixture{rec: &storetest.Recorder{}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f.store = mustOpen(t, withJobs(recorderJobs{f.rec}))
	f.store.Now = func() time.Time { return f.now }
	f.account = &narrator.Account{Name: "Acme"}
	if err := f.store.CreateAccount(t.Context(), f.account); err != nil {
		t.Fatal(err)
	}
	f.project = &narrator.Project{AccountID: f.account.ID, Title: "Daily", Type: narrator.ProjectTypeAPI,
		Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := f.store.CreateProject(t.Context(), f.project); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *dashFixture) mustAudio(t *testing.T, title, externalID string) *narrator.Audio {
	t.Helper()
	a := &narrator.Audio{ProjectID: f.project.ID, Title: title, Body: "Text of " + title, ExternalID: externalID}
	if _, err := f.store.CreateAudio(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func wantErrCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := narrator.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	f := newDashFixture(t)
	ctx := t.Context()
	u := &narrator.User{AccountID: f.account.ID, Email: "ed@acme.test", PasswordHash: []byte("hash-1")}
	if err := f.store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || !u.CreatedAt.Equal(f.now) {
		t.Errorf("created user %+v", u)
	}
	got, err := f.store.FindUserByEmail(ctx, "  ED@Acme.Test ")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != u.ID || got.AccountID != f.account.ID || !bytes.Equal(got.PasswordHash, []byte("hash-1")) {
		t.Errorf("FindUserByEmail = %+v", got)
	}
	_, err = f.store.FindUserByEmail(ctx, "nobody@acme.test")
	wantErrCode(t, err, narrator.ENOTFOUND)

	// Emails are unique across accounts.
	other := &narrator.Account{Name: "Other"}
	if err := f.store.CreateAccount(ctx, other); err != nil {
		t.Fatal(err)
	}
	err = f.store.CreateUser(ctx, &narrator.User{AccountID: other.ID, Email: "ed@acme.test", PasswordHash: []byte("x")})
	wantErrCode(t, err, narrator.ECONFLICT)
	err = f.store.CreateUser(ctx, &narrator.User{AccountID: 999, Email: "new@acme.test", PasswordHash: []byte("x")})
	wantErrCode(t, err, narrator.ENOTFOUND)

	for _, bad := range []narrator.User{
		{AccountID: f.account.ID, Email: "", PasswordHash: []byte("x")},
		{AccountID: f.account.ID, Email: "no-at-sign", PasswordHash: []byte("x")},
		{AccountID: f.account.ID, Email: "Upper@acme.test", PasswordHash: []byte("x")},
		{AccountID: f.account.ID, Email: "a b@acme.test", PasswordHash: []byte("x")},
		{AccountID: f.account.ID, Email: "ok@acme.test"},
	} {
		err := f.store.CreateUser(ctx, &bad)
		wantErrCode(t, err, narrator.EINVALID)
	}

	// A new password ends the user's sessions.
	sess := &narrator.Session{UserID: u.ID, CSRFToken: "csrf", ExpiresAt: f.now.Add(time.Hour)}
	if err := f.store.CreateSession(ctx, sess, []byte("token-hash")); err != nil {
		t.Fatal(err)
	}
	if err := f.store.SetUserPassword(ctx, u.ID, []byte("hash-2")); err != nil {
		t.Fatal(err)
	}
	_, err = f.store.FindSession(ctx, []byte("token-hash"))
	wantErrCode(t, err, narrator.EUNAUTHORIZED)
	got, err = f.store.FindUserByEmail(ctx, "ed@acme.test")
	if err != nil || !bytes.Equal(got.PasswordHash, []byte("hash-2")) {
		t.Errorf("after SetUserPassword: %+v, %v", got, err)
	}
	wantErrCode(t, f.store.SetUserPassword(ctx, 999, []byte("x")), narrator.ENOTFOUND)
}

func TestSessions(t *testing.T) {
	t.Parallel()
	f := newDashFixture(t)
	ctx := t.Context()
	u := &narrator.User{AccountID: f.account.ID, Email: "ed@acme.test", PasswordHash: []byte("hash")}
	if err := f.store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	sess := &narrator.Session{UserID: u.ID, CSRFToken: "csrf-1", ExpiresAt: f.now.Add(time.Hour)}
	if err := f.store.CreateSession(ctx, sess, []byte("hash-a")); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.FindSession(ctx, []byte("hash-a"))
	if err != nil {
		t.Fatal(err)
	}
	want := narrator.Session{ID: sess.ID, UserID: u.ID, AccountID: f.account.ID, Email: "ed@acme.test",
		CSRFToken: "csrf-1", CreatedAt: f.now, ExpiresAt: f.now.Add(time.Hour)}
	if *got != want {
		t.Errorf("FindSession = %+v, want %+v", *got, want)
	}
	_, err = f.store.FindSession(ctx, []byte("other"))
	wantErrCode(t, err, narrator.EUNAUTHORIZED)
	wantErrCode(t, f.store.CreateSession(ctx, &narrator.Session{UserID: 999, CSRFToken: "c", ExpiresAt: f.now}, []byte("h")), narrator.ENOTFOUND)
	wantErrCode(t, f.store.CreateSession(ctx, &narrator.Session{UserID: u.ID, ExpiresAt: f.now}, []byte("h")), narrator.EINVALID)

	// Expiry.
	f.now = f.now.Add(time.Hour)
	_, err = f.store.FindSession(ctx, []byte("hash-a"))
	wantErrCode(t, err, narrator.EUNAUTHORIZED)

	// Sign-out deletes; deleting twice is fine.
	sess2 := &narrator.Session{UserID: u.ID, CSRFToken: "csrf-2", ExpiresAt: f.now.Add(time.Hour)}
	if err := f.store.CreateSession(ctx, sess2, []byte("hash-b")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := f.store.DeleteSession(ctx, []byte("hash-b")); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.store.FindSession(ctx, []byte("hash-b"))
	wantErrCode(t, err, narrator.EUNAUTHORIZED)

	// Creating a session removes expired ones.
	var n int
	if err := f.store.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d sessions left, want the expired one removed", n)
	}
}

func TestSearchAudios(t *testing.T) {
	t.Parallel()
	f := newDashFixture(t)
	ctx := t.Context()
	var all []*narrator.Audio
	titles := []string{"Council approves library", "Weather: rain", "100% sure_thing", "Library hours", "Sports"}
	for i, title := range titles {
		all = append(all, f.mustAudio(t, title, fmt.Sprintf("ext-%d", i)))
		f.now = f.now.Add(24 * time.Hour)
	}
	ids := func(as []*narrator.Audio) []int64 {
		var out []int64
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	tests := []struct {
		name      string
		query     string
		since     time.Time
		page, per int
		want      []int64
		total     int
	}{
		{"all newest first", "", time.Time{}, 1, 10, []int64{all[4].ID, all[3].ID, all[2].ID, all[1].ID, all[0].ID}, 5},
		{"paged", "", time.Time{}, 2, 2, []int64{all[2].ID, all[1].ID}, 5},
		{"past the end", "", time.Time{}, 9, 2, nil, 5},
		{"title ignores case", "LIBRARY", time.Time{}, 1, 10, []int64{all[3].ID, all[0].ID}, 2},
		{"external id", "ext-1", time.Time{}, 1, 10, []int64{all[1].ID}, 1},
		{"percent is literal", "100%", time.Time{}, 1, 10, []int64{all[2].ID}, 1},
		{"underscore is literal", "l_brary", time.Time{}, 1, 10, nil, 0},
		{"since", "", all[3].CreatedAt, 1, 10, []int64{all[4].ID, all[3].ID}, 2},
		{"since and query", "library", all[1].CreatedAt, 1, 10, []int64{all[3].ID}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := f.store.SearchAudios(ctx, f.project.ID, tt.query, tt.since, tt.page, tt.per)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(got)) != fmt.Sprint(tt.want) || total != tt.total {
				t.Errorf("got %v (total %d), want %v (total %d)", ids(got), total, tt.want, tt.total)
			}
			for _, a := range got {
				if len(a.Media) != 2 {
					t.Errorf("audio %d has %d media, want 2", a.ID, len(a.Media))
				}
			}
		})
	}
	if _, err := f.store.DeleteAudio(ctx, f.project.ID, fmt.Sprint(all[0].ID)); err != nil {
		t.Fatal(err)
	}
	got, total, err := f.store.SearchAudios(ctx, f.project.ID, "council", time.Time{}, 1, 10)
	if err != nil || len(got) != 0 || total != 0 {
		t.Errorf("deleted audio found: %v %d %v", got, total, err)
	}
	_, _, err = f.store.SearchAudios(ctx, f.project.ID, "", time.Time{}, 1, 0)
	wantErrCode(t, err, narrator.EINVALID)

	// FindAudiosByID leaves out deleted audios and other projects' audios.
	other := &narrator.Project{AccountID: f.account.ID, Title: "Other", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
	if err := f.store.CreateProject(ctx, other); err != nil {
		t.Fatal(err)
	}
	byID, err := f.store.FindAudiosByID(ctx, f.project.ID, []int64{all[0].ID, all[1].ID, all[4].ID, 12345})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(byID)) != fmt.Sprint([]int64{all[1].ID, all[4].ID}) {
		t.Errorf("FindAudiosByID = %v", ids(byID))
	}
	byID, err = f.store.FindAudiosByID(ctx, other.ID, []int64{all[1].ID})
	if err != nil || len(byID) != 0 {
		t.Errorf("FindAudiosByID in another project = %v, %v", ids(byID), err)
	}
	_, err = f.store.FindAudiosByID(ctx, f.project.ID, make([]int64, narrator.MaxAudiosByID+1))
	wantErrCode(t, err, narrator.EINVALID)
}

func TestRegenerateAudio(t *testing.T) {
	t.Parallel()
	f := newDashFixture(t)
	ctx := t.Context()
	a := f.mustAudio(t, "Title", "r-1")
	if err := f.store.FailAudio(ctx, a.ID, 1, "the engine broke"); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
	got, err := f.store.RegenerateAudio(ctx, f.project.ID, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != narrator.StateUnprocessed || got.Error != "" || got.Revision != 2 || !got.UpdatedAt.Equal(f.now) {
		t.Errorf("regenerated audio %+v", got)
	}
	stored, err := f.store.FindAudio(ctx, f.project.ID, fmt.Sprint(a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if stored.State != narrator.StateUnprocessed || stored.Revision != 2 || stored.Title != "Title" || stored.Body != a.Body {
		t.Errorf("stored after regenerate %+v", stored)
	}
	calls := f.rec.Synthesized()
	if len(calls) != 2 || fmt.Sprint(calls[1]) != fmt.Sprint(storetest.SynthesizeCall{AudioID: a.ID, Revision: 2}) {
		t.Errorf("synthesis jobs %+v, want a second one for revision 2", calls)
	}

	// If the job cannot be enqueued, nothing changes.
	f.rec.FailWith(fmt.Errorf("queue down"))
	if _, err := f.store.RegenerateAudio(ctx, f.project.ID, "r-1"); err == nil {
		t.Fatal("regenerate succeeded without its job")
	}
	stored, err = f.store.FindAudio(ctx, f.project.ID, "r-1")
	if err != nil || stored.Revision != 2 {
		t.Errorf("after a failed regenerate: %+v, %v", stored, err)
	}
	_, err = f.store.RegenerateAudio(ctx, f.project.ID, "missing")
	wantErrCode(t, err, narrator.ENOTFOUND)
}
