package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var searchTests = []test{
	{"QueryPeriodPaging", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		var all []*narrator.Audio
		for i, title := range []string{"Council approves library", "Weather: rain", "100% sure_thing", "Library hours", "Sports"} {
			a := newAudio(p.ID, fmt.Sprintf("ext-%d", i))
			a.Title = title
			all = append(all, mustCreateAudio(t, b.store, a))
			b.clock.Advance(24 * time.Hour)
		}
		for _, tt := range []struct {
			name      string
			query     string
			since     time.Time
			page, per int
			want      []int64
			total     int
		}{
			{"all newest first", "", time.Time{}, 1, 10, []int64{all[4].ID, all[3].ID, all[2].ID, all[1].ID, all[0].ID}, 5},
			{"paged", "", time.Time{}, 2, 2, []int64{all[2].ID, all[1].ID}, 5},
			{"last page", "", time.Time{}, 3, 2, []int64{all[0].ID}, 5},
			{"past the end", "", time.Time{}, 9, 2, []int64{}, 5},
			{"huge page", "", time.Time{}, 1 << 40, 2, []int64{}, 5},
			{"page below 1", "", time.Time{}, 0, 2, []int64{all[4].ID, all[3].ID}, 5},
			{"blank query is no filter", "  ", time.Time{}, 1, 2, []int64{all[4].ID, all[3].ID}, 5},
			{"title ignores case", "LIBRARY", time.Time{}, 1, 10, []int64{all[3].ID, all[0].ID}, 2},
			{"query is trimmed", " library ", time.Time{}, 1, 10, []int64{all[3].ID, all[0].ID}, 2},
			{"filtered paging", "library", time.Time{}, 2, 1, []int64{all[0].ID}, 2},
			{"external id", "ext-1", time.Time{}, 1, 10, []int64{all[1].ID}, 1},
			{"percent is literal", "100%", time.Time{}, 1, 10, []int64{all[2].ID}, 1},
			{"underscore is literal", "l_brary", time.Time{}, 1, 10, []int64{}, 0},
			{"backslash is literal", `sure\`, time.Time{}, 1, 10, []int64{}, 0},
			{"NUL matches nothing", "rain\x00", time.Time{}, 1, 10, []int64{}, 0},
			{"invalid UTF-8 matches nothing", "rain\xff", time.Time{}, 1, 10, []int64{}, 0},
			{"since", "", all[3].CreatedAt, 1, 10, []int64{all[4].ID, all[3].ID}, 2},
			{"since and query", "library", all[1].CreatedAt, 1, 10, []int64{all[3].ID}, 1},
		} {
			got, total, err := b.store.SearchAudios(ctx, p.ID, tt.query, tt.since, tt.page, tt.per)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			wantEqual(t, tt.name+": audios", ids(got), tt.want)
			wantEqual(t, tt.name+": total", total, tt.total)
		}
		got, _, err := b.store.SearchAudios(ctx, p.ID, "rain", time.Time{}, 1, 10)
		if err != nil || len(got) != 1 {
			t.Fatalf("search rain = %v, %v", ids(got), err)
		}
		wantAudio(t, got[0], all[1])

		if _, err := b.store.DeleteAudio(ctx, p.ID, itoa(all[0].ID)); err != nil {
			t.Fatal(err)
		}
		got, total, err := b.store.SearchAudios(ctx, p.ID, "council", time.Time{}, 1, 10)
		if err != nil || len(got) != 0 || total != 0 {
			t.Errorf("deleted audio found: %v %d %v", ids(got), total, err)
		}
		if _, total, err := b.store.SearchAudios(ctx, p.ID, "", time.Time{}, 1, 10); err != nil || total != 4 {
			t.Errorf("unfiltered total after a delete = %d, %v; want 4", total, err)
		}
		for _, per := range []int{0, -1} {
			_, _, err = b.store.SearchAudios(ctx, p.ID, "", time.Time{}, 1, per)
			wantCode(t, err, narrator.EINVALID)
		}
		other := mustProjectOf(t, b.store, p.AccountID)
		if got, total, err := b.store.SearchAudios(ctx, other.ID, "", time.Time{}, 1, 10); err != nil || len(got) != 0 || total != 0 {
			t.Errorf("search of an empty project = %v, %d, %v", ids(got), total, err)
		}
	}},
	{"FindAudiosByID", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		other := mustProjectOf(t, b.store, p.AccountID)
		a1 := mustAudio(t, b.store, p.ID, "one")
		mustFinish(t, b.store, a1, "v1")
		a2 := mustAudio(t, b.store, p.ID, "two")
		gone := mustAudio(t, b.store, p.ID, "gone")
		elsewhere := mustAudio(t, b.store, other.ID, "")
		if _, err := b.store.DeleteAudio(ctx, p.ID, "gone"); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.FindAudiosByID(ctx, p.ID, []int64{a2.ID, gone.ID, elsewhere.ID, 12345, a1.ID, a2.ID})
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "audios", ids(got), []int64{a1.ID, a2.ID})
		wantAudio(t, got[0], mustFindAudio(t, b.store, p.ID, "one"))
		wantAudio(t, got[1], a2)
		for _, in := range [][]int64{nil, {}} {
			got, err := b.store.FindAudiosByID(ctx, p.ID, in)
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("FindAudiosByID(%#v) = %#v, %v; want empty slice", in, got, err)
			}
		}
		if _, err := b.store.FindAudiosByID(ctx, p.ID, make([]int64, narrator.MaxAudiosByID)); err != nil {
			t.Errorf("FindAudiosByID of %d IDs: %v", narrator.MaxAudiosByID, err)
		}
		_, err = b.store.FindAudiosByID(ctx, p.ID, make([]int64, narrator.MaxAudiosByID+1))
		wantCode(t, err, narrator.EINVALID)
	}},
}

var resynthesizeTests = []test{
	{"FailedAudio", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "r-1")
		if err := b.store.FailAudio(ctx, a.ID, 1, "the engine broke"); err != nil {
			t.Fatal(err)
		}
		now := b.clock.Advance(time.Minute)
		got, err := b.store.ResynthesizeAudio(ctx, p.ID, "r-1")
		if err != nil {
			t.Fatal(err)
		}
		want := *a
		want.Revision, want.UpdatedAt = 2, now
		wantAudio(t, got, &want)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, itoa(a.ID)), &want)
		wantEqual(t, "synthesis jobs", b.rec.Synthesized(), []SynthesizeCall{{a.ID, 1}, {a.ID, 2}})

		// If the job cannot be enqueued, nothing changes.
		b.clock.Advance(time.Minute)
		b.rec.FailWith(errBroken)
		if _, err := b.store.ResynthesizeAudio(ctx, p.ID, "r-1"); err == nil {
			t.Fatal("resynthesize succeeded without its job")
		}
		b.rec.FailWith(nil)
		wantAudio(t, mustFindAudio(t, b.store, p.ID, "r-1"), &want)
		_, err = b.store.ResynthesizeAudio(ctx, p.ID, "missing")
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.ResynthesizeAudio(ctx, mustProjectOf(t, b.store, p.AccountID).ID, "r-1")
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"ProcessedKeepsMedia", func(t *testing.T, b *bundle) {
		p := mustProject(t, b.store)
		a := mustAudio(t, b.store, p.ID, "")
		keys := mustFinish(t, b.store, a, "v1")
		got, err := b.store.ResynthesizeAudio(t.Context(), p.ID, itoa(a.ID))
		if err != nil {
			t.Fatal(err)
		}
		if got.State != narrator.StateUnprocessed || got.Revision != 2 || got.DurationMS != 1234 {
			t.Errorf("resynthesized audio = %+v", got)
		}
		if m, _ := got.MediaOf(narrator.ContentTypeMP3); m.Key != keys[narrator.ContentTypeMP3] {
			t.Errorf("mp3 key = %q, want %q kept until the new speech is published", m.Key, keys[narrator.ContentTypeMP3])
		}
		wantAudio(t, mustFindAudio(t, b.store, p.ID, itoa(a.ID)), got)
		if n := len(b.rec.DeletedMedia()); n != 0 {
			t.Errorf("%d media removals", n)
		}
	}},
}

var userTests = []test{
	{"CreateAndFind", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		u := &narrator.User{AccountID: acc.ID, Email: "ed@acme.test", PasswordHash: []byte("hash-1")}
		if err := b.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if u.ID == 0 || !u.CreatedAt.Equal(epoch) || !u.UpdatedAt.Equal(epoch) {
			t.Errorf("created user %+v", u)
		}
		for _, email := range []string{"ed@acme.test", "  ED@Acme.Test "} {
			got, err := b.store.FindUserByEmail(ctx, email)
			if err != nil {
				t.Fatalf("FindUserByEmail(%q): %v", email, err)
			}
			wantEqual(t, "user", got, u)
		}
		for _, email := range []string{"nobody@acme.test", "", "ed@acme.test\x00", "ed@acme.test\xff"} {
			_, err := b.store.FindUserByEmail(ctx, email)
			wantCode(t, err, narrator.ENOTFOUND)
		}
	}},
	{"Errors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		if err := b.store.CreateUser(ctx, &narrator.User{AccountID: acc.ID, Email: "ed@acme.test", PasswordHash: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		// Emails are unique across accounts.
		err := b.store.CreateUser(ctx, &narrator.User{AccountID: other.ID, Email: "ed@acme.test", PasswordHash: []byte("x")})
		wantCode(t, err, narrator.ECONFLICT)
		err = b.store.CreateUser(ctx, &narrator.User{AccountID: 999, Email: "new@acme.test", PasswordHash: []byte("x")})
		wantCode(t, err, narrator.ENOTFOUND)
		for _, bad := range []narrator.User{
			{AccountID: acc.ID, Email: "", PasswordHash: []byte("x")},
			{AccountID: acc.ID, Email: "no-at-sign", PasswordHash: []byte("x")},
			{AccountID: acc.ID, Email: "Upper@acme.test", PasswordHash: []byte("x")},
			{AccountID: acc.ID, Email: "a b@acme.test", PasswordHash: []byte("x")},
			{AccountID: acc.ID, Email: "a\x00b@acme.test", PasswordHash: []byte("x")},
			{AccountID: acc.ID, Email: "ok@acme.test"},
		} {
			wantCode(t, b.store.CreateUser(ctx, &bad), narrator.EINVALID)
		}
		if _, err := b.store.FindUserByEmail(ctx, "ok@acme.test"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
			t.Errorf("an invalid user was stored: %v", err)
		}
	}},
	{"SetPasswordEndsSessions", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		u := mustUser(t, b.store, acc.ID, "ed@acme.test")
		other := mustUser(t, b.store, acc.ID, "ann@acme.test")
		mustSession(t, b.store, u.ID, "ed-1", epoch.Add(time.Hour))
		mustSession(t, b.store, u.ID, "ed-2", epoch.Add(time.Hour))
		mustSession(t, b.store, other.ID, "ann", epoch.Add(time.Hour))
		now := b.clock.Advance(time.Minute)
		if err := b.store.SetUserPassword(ctx, u.ID, []byte("hash-2")); err != nil {
			t.Fatal(err)
		}
		for _, token := range []string{"ed-1", "ed-2"} {
			_, err := b.store.FindSession(ctx, hashOf(token))
			wantCode(t, err, narrator.EUNAUTHORIZED)
		}
		if _, err := b.store.FindSession(ctx, hashOf("ann")); err != nil {
			t.Errorf("another user's session ended: %v", err)
		}
		got, err := b.store.FindUserByEmail(ctx, "ed@acme.test")
		if err != nil {
			t.Fatal(err)
		}
		want := *u
		want.PasswordHash, want.UpdatedAt = []byte("hash-2"), now
		wantEqual(t, "user", got, &want)

		wantCode(t, b.store.SetUserPassword(ctx, 999, []byte("x")), narrator.ENOTFOUND)
		wantCode(t, b.store.SetUserPassword(ctx, u.ID, nil), narrator.EINVALID)
	}},
}

var sessionTests = []test{
	{"CreateFindExpire", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		u := mustUser(t, b.store, acc.ID, "ed@acme.test")
		sess := mustSession(t, b.store, u.ID, "token-a", epoch.Add(time.Hour))
		if sess.ID == 0 || !sess.CreatedAt.Equal(epoch) {
			t.Errorf("created session %+v", sess)
		}
		got, err := b.store.FindSession(ctx, hashOf("token-a"))
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "session", *got, narrator.Session{ID: sess.ID, UserID: u.ID, AccountID: acc.ID, Email: "ed@acme.test",
			CSRFToken: "csrf-token-a", CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour)})
		for _, hash := range [][]byte{hashOf("other"), nil} {
			_, err = b.store.FindSession(ctx, hash)
			wantCode(t, err, narrator.EUNAUTHORIZED)
		}

		// A session ends at its expiry time.
		b.clock.Advance(time.Hour - time.Microsecond)
		if _, err := b.store.FindSession(ctx, hashOf("token-a")); err != nil {
			t.Fatalf("a microsecond before expiry: %v", err)
		}
		b.clock.Advance(time.Microsecond)
		_, err = b.store.FindSession(ctx, hashOf("token-a"))
		wantCode(t, err, narrator.EUNAUTHORIZED)
	}},
	{"Delete", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		u := mustUser(t, b.store, acc.ID, "ed@acme.test")
		mustSession(t, b.store, u.ID, "token-a", epoch.Add(time.Hour))
		mustSession(t, b.store, u.ID, "token-b", epoch.Add(time.Hour))
		// Signing out twice is harmless.
		for range 2 {
			if err := b.store.DeleteSession(ctx, hashOf("token-a")); err != nil {
				t.Fatal(err)
			}
		}
		_, err := b.store.FindSession(ctx, hashOf("token-a"))
		wantCode(t, err, narrator.EUNAUTHORIZED)
		if _, err := b.store.FindSession(ctx, hashOf("token-b")); err != nil {
			t.Errorf("the user's other session ended: %v", err)
		}
	}},
	{"Errors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		u := mustUser(t, b.store, acc.ID, "ed@acme.test")
		in := func(userID int64, csrf string) *narrator.Session {
			return &narrator.Session{UserID: userID, CSRFToken: csrf, ExpiresAt: epoch.Add(time.Hour)}
		}
		wantCode(t, b.store.CreateSession(ctx, in(999, "c"), hashOf("h")), narrator.ENOTFOUND)
		wantCode(t, b.store.CreateSession(ctx, in(u.ID, ""), hashOf("h")), narrator.EINVALID)
		wantCode(t, b.store.CreateSession(ctx, in(u.ID, "c"), nil), narrator.EINVALID)
		mustSession(t, b.store, u.ID, "h", epoch.Add(time.Hour))
		wantCode(t, b.store.CreateSession(ctx, in(u.ID, "c"), hashOf("h")), narrator.ECONFLICT)
	}},
}

var timeTests = []test{
	{"MicrosecondsUTC", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		zone := time.FixedZone("X", 3*3600)
		b.clock.Set(time.Date(2025, 1, 2, 3, 4, 5, 123456789, zone))
		want := time.Date(2025, 1, 2, 0, 4, 5, 123456000, time.UTC)
		check := func(what string, got time.Time) {
			t.Helper()
			if got != want { // == checks the location too
				t.Errorf("%s = %v (%v), want %v", what, got, got.Location(), want)
			}
		}
		acc := mustAccount(t, b.store, "Acme")
		check("returned account CreatedAt", acc.CreatedAt)
		gotAcc, err := b.store.FindAccount(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("stored account CreatedAt", gotAcc.CreatedAt)
		p := mustProjectOf(t, b.store, acc.ID)
		check("project CreatedAt", p.CreatedAt)
		a := mustAudio(t, b.store, p.ID, "")
		got := mustFindAudio(t, b.store, p.ID, itoa(a.ID))
		check("audio CreatedAt", got.CreatedAt)
		check("audio UpdatedAt", got.UpdatedAt)
		if _, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("k"), "k"); err != nil {
			t.Fatal(err)
		}
		keys, err := b.store.ListAPIKeys(ctx, acc.ID)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys = %v, %v", keys, err)
		}
		check("key CreatedAt", keys[0].CreatedAt)
		if err := b.store.RevokeAPIKey(ctx, acc.ID, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		if keys, err = b.store.ListAPIKeys(ctx, acc.ID); err != nil || keys[0].RevokedAt == nil {
			t.Fatalf("keys = %v, %v", keys, err)
		}
		check("key RevokedAt", *keys[0].RevokedAt)
		u := mustUser(t, b.store, acc.ID, "ed@acme.test")
		check("user CreatedAt", u.CreatedAt)
		// A session's expiry is the caller's time, kept as stored.
		sess := mustSession(t, b.store, u.ID, "t", time.Date(2025, 1, 2, 4, 4, 5, 999999999, zone))
		gotSess, err := b.store.FindSession(ctx, hashOf("t"))
		if err != nil {
			t.Fatal(err)
		}
		check("session CreatedAt", gotSess.CreatedAt)
		if wantExp := time.Date(2025, 1, 2, 1, 4, 5, 999999000, time.UTC); gotSess.ExpiresAt != wantExp || sess.ExpiresAt != wantExp {
			t.Errorf("session ExpiresAt returned %v, stored %v; want %v", sess.ExpiresAt, gotSess.ExpiresAt, wantExp)
		}
	}},
}

// mustUser creates a dashboard user.
func mustUser(tb testing.TB, s Store, accountID int64, email string) *narrator.User {
	tb.Helper()
	u := &narrator.User{AccountID: accountID, Email: email, PasswordHash: []byte("hash of " + email)}
	if err := s.CreateUser(tb.Context(), u); err != nil {
		tb.Fatalf("CreateUser(%q): %v", email, err)
	}
	return u
}

// mustSession creates a session of a user under the hash of token.
func mustSession(tb testing.TB, s Store, userID int64, token string, expires time.Time) *narrator.Session {
	tb.Helper()
	sess := &narrator.Session{UserID: userID, CSRFToken: "csrf-" + token, ExpiresAt: expires}
	if err := s.CreateSession(tb.Context(), sess, hashOf(token)); err != nil {
		tb.Fatalf("CreateSession(%q): %v", token, err)
	}
	return sess
}
