package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

var accountTests = []test{
	{"CreateAndFind", func(t *testing.T, b *bundle) {
		a := mustAccount(t, b.store, "Acme")
		if a.ID == 0 || !a.CreatedAt.Equal(epoch) {
			t.Fatalf("created account = %+v, want an ID and CreatedAt %v", a, epoch)
		}
		got, err := b.store.FindAccount(t.Context(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "FindAccount", got, a)
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
		}
		other := mustAccount(t, b.store, "Other")
		if other.ID == a.ID {
			t.Errorf("two accounts got ID %d", a.ID)
		}
	}},
	{"Invalid", func(t *testing.T, b *bundle) {
		for _, name := range []string{"", "   "} {
			err := b.store.CreateAccount(t.Context(), &narrator.Account{Name: name})
			wantCode(t, err, narrator.EINVALID)
		}
	}},
	{"NotFound", func(t *testing.T, b *bundle) {
		_, err := b.store.FindAccount(t.Context(), 999)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
}

var apiKeyTests = []test{
	{"CreateAuthenticateRevoke", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		k, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("secret-1"), "nk_sec")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "key", *k, narrator.APIKey{ID: k.ID, AccountID: acc.ID, Prefix: "nk_sec", CreatedAt: epoch})
		got, err := b.store.AuthenticateAPIKey(ctx, hashOf("secret-1"))
		if err != nil || got != acc.ID {
			t.Fatalf("AuthenticateAPIKey = %d, %v; want %d", got, err, acc.ID)
		}
		_, err = b.store.AuthenticateAPIKey(ctx, hashOf("wrong"))
		wantCode(t, err, narrator.EUNAUTHORIZED)
		_, err = b.store.AuthenticateAPIKey(ctx, nil)
		wantCode(t, err, narrator.EUNAUTHORIZED)

		revokedAt := b.clock.Advance(time.Minute)
		if err := b.store.RevokeAPIKey(ctx, acc.ID, k.ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.AuthenticateAPIKey(ctx, hashOf("secret-1"))
		wantCode(t, err, narrator.EUNAUTHORIZED)

		// Revoking again succeeds and keeps the first time.
		b.clock.Advance(time.Minute)
		if err := b.store.RevokeAPIKey(ctx, acc.ID, k.ID); err != nil {
			t.Fatalf("second revoke: %v", err)
		}
		keys, err := b.store.ListAPIKeys(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(revokedAt) {
			t.Fatalf("keys after revoke = %+v, want one revoked at %v", keys, revokedAt)
		}
	}},
	{"ListNewestFirst", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		var want []int64
		for i, secret := range []string{"a", "b", "c"} {
			b.clock.Advance(time.Second)
			k, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf(secret), secret)
			if err != nil {
				t.Fatalf("key %d: %v", i, err)
			}
			want = append([]int64{k.ID}, want...)
		}
		if _, err := b.store.CreateAPIKey(ctx, other.ID, hashOf("d"), "d"); err != nil {
			t.Fatal(err)
		}
		if err := b.store.RevokeAPIKey(ctx, acc.ID, want[1]); err != nil {
			t.Fatal(err)
		}
		keys, err := b.store.ListAPIKeys(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, k := range keys {
			got = append(got, k.ID)
			if (k.RevokedAt != nil) != (k.ID == want[1]) {
				t.Errorf("key %d RevokedAt = %v", k.ID, k.RevokedAt)
			}
		}
		wantEqual(t, "key IDs", got, want)

		empty, err := b.store.ListAPIKeys(ctx, 999)
		if err != nil || empty == nil || len(empty) != 0 {
			t.Fatalf("ListAPIKeys(missing) = %#v, %v; want empty slice", empty, err)
		}
	}},
	{"Errors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		_, err := b.store.CreateAPIKey(ctx, 999, hashOf("x"), "x")
		wantCode(t, err, narrator.ENOTFOUND)
		k, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("x"), "x")
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.store.CreateAPIKey(ctx, other.ID, hashOf("x"), "x")
		wantCode(t, err, narrator.ECONFLICT)

		wantCode(t, b.store.RevokeAPIKey(ctx, other.ID, k.ID), narrator.ENOTFOUND)
		wantCode(t, b.store.RevokeAPIKey(ctx, acc.ID, 999), narrator.ENOTFOUND)
		if got, err := b.store.AuthenticateAPIKey(ctx, hashOf("x")); err != nil || got != acc.ID {
			t.Fatalf("key revoked through another account: %d, %v", got, err)
		}
	}},
	{"AuthorizeProject", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		k, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("mine"), "nk_min")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.CreateAPIKey(ctx, other.ID, hashOf("theirs"), "nk_the"); err != nil {
			t.Fatal(err)
		}
		p := mustProjectOf(t, b.store, acc.ID)
		theirs := mustProjectOf(t, b.store, other.ID)
		mustCreateAudio(t, b.store, newAudio(p.ID, "counted"))
		want, err := b.store.FindProject(ctx, acc.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.store.AuthorizeProject(ctx, hashOf("mine"), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "AuthorizeProject", got, want)
		if got.AudioCount != 1 {
			t.Errorf("AudioCount = %d, want 1", got.AudioCount)
		}

		_, err = b.store.AuthorizeProject(ctx, hashOf("mine"), theirs.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.AuthorizeProject(ctx, hashOf("mine"), 999)
		wantCode(t, err, narrator.ENOTFOUND)
		// A bad key is refused whatever the project, so that it learns
		// nothing of which projects exist.
		for _, id := range []int64{p.ID, theirs.ID, 999} {
			_, err = b.store.AuthorizeProject(ctx, hashOf("wrong"), id)
			wantCode(t, err, narrator.EUNAUTHORIZED)
			_, err = b.store.AuthorizeProject(ctx, nil, id)
			wantCode(t, err, narrator.EUNAUTHORIZED)
		}

		// Revocation takes effect on the next call.
		if err := b.store.RevokeAPIKey(ctx, acc.ID, k.ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.store.AuthorizeProject(ctx, hashOf("mine"), p.ID)
		wantCode(t, err, narrator.EUNAUTHORIZED)
	}},
	{"AuthorizeProjectConcurrently", func(t *testing.T, b *bundle) {
		// Concurrent calls, which a store may answer together, each get
		// their own answer.
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		for key, id := range map[string]int64{"mine": acc.ID, "theirs": other.ID} {
			if _, err := b.store.CreateAPIKey(ctx, id, hashOf(key), "nk_"+key); err != nil {
				t.Fatal(err)
			}
		}
		old, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("old"), "nk_old")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.store.RevokeAPIKey(ctx, acc.ID, old.ID); err != nil {
			t.Fatal(err)
		}
		p := mustProjectOf(t, b.store, acc.ID)
		theirs := mustProjectOf(t, b.store, other.ID)
		authorizeAll(t, b.store, []authorizeCase{
			{key: "mine", projectID: p.ID, want: p.ID},
			{key: "theirs", projectID: theirs.ID, want: theirs.ID},
			{key: "mine", projectID: theirs.ID, code: narrator.ENOTFOUND},
			{key: "theirs", projectID: p.ID, code: narrator.ENOTFOUND},
			{key: "mine", projectID: 999, code: narrator.ENOTFOUND},
			{key: "wrong", projectID: p.ID, code: narrator.EUNAUTHORIZED},
			{key: "old", projectID: p.ID, code: narrator.EUNAUTHORIZED},
		}, 16, 10)
	}},
	{"CreateAudioWithKey", testCreateAudioWithKey},
}

// authorizeCase is one AuthorizeProject call of
// AuthorizeProjectConcurrently, with its answer: the project's ID, or the
// error code.
type authorizeCase struct {
	key       string
	projectID int64
	want      int64
	code      string
}

// authorizeAll makes every call of cases from each of clients goroutines
// at once, rounds times, in an order of its own, and fails tb on any call
// that does not get its own answer.
func authorizeAll(tb testing.TB, s Store, cases []authorizeCase, clients, rounds int) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients*rounds*len(cases))
	for g := range clients {
		wg.Go(func() {
			for r := range rounds {
				for i := range cases {
					c := cases[(g+r+i)%len(cases)]
					got, err := s.AuthorizeProject(tb.Context(), hashOf(c.key), c.projectID)
					switch {
					case c.code != "" && narrator.ErrorCode(err) != c.code:
						errs <- fmt.Errorf("key %q, project %d: error %v, want code %s", c.key, c.projectID, err, c.code)
					case c.code == "" && (err != nil || got.ID != c.want):
						errs <- fmt.Errorf("key %q, project %d: %+v, %v, want project %d", c.key, c.projectID, got, err, c.want)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
}

var projectTests = []test{
	{"CreateAndFind", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		p := newProject(acc.ID, "News")
		p.URL = "https://example.com"
		if err := b.store.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		if p.ID == 0 || !p.CreatedAt.Equal(epoch) {
			t.Fatalf("created project = %+v", p)
		}
		got, err := b.store.FindProject(ctx, acc.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "FindProject", got, p)

		noURL := newProject(acc.ID, "Blog")
		if err := b.store.CreateProject(ctx, noURL); err != nil {
			t.Fatal(err)
		}
		got, err = b.store.FindProject(ctx, acc.ID, noURL.ID)
		if err != nil || got.URL != "" {
			t.Fatalf("FindProject(no url) = %+v, %v", got, err)
		}
	}},
	{"Errors", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		wantCode(t, b.store.CreateProject(ctx, newProject(999, "x")), narrator.ENOTFOUND)
		bad := newProject(acc.ID, "x")
		bad.Language = "english"
		wantCode(t, b.store.CreateProject(ctx, bad), narrator.EINVALID)
		bad = newProject(acc.ID, "")
		wantCode(t, b.store.CreateProject(ctx, bad), narrator.EINVALID)

		p := mustProjectOf(t, b.store, acc.ID)
		_, err := b.store.FindProject(ctx, other.ID, p.ID)
		wantCode(t, err, narrator.ENOTFOUND)
		_, err = b.store.FindProject(ctx, acc.ID, 999)
		wantCode(t, err, narrator.ENOTFOUND)
	}},
	{"ListAndCount", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		other := mustAccount(t, b.store, "Other")
		p1 := mustProjectOf(t, b.store, acc.ID)
		p2 := mustProjectOf(t, b.store, other.ID)
		p3 := mustProjectOf(t, b.store, acc.ID)
		mustAudio(t, b.store, p1.ID, "")
		mustAudio(t, b.store, p1.ID, "")
		gone := mustAudio(t, b.store, p1.ID, "")
		mustAudio(t, b.store, p2.ID, "")
		if _, err := b.store.DeleteAudio(ctx, p1.ID, itoa(gone.ID)); err != nil {
			t.Fatal(err)
		}

		list, err := b.store.ListProjects(ctx, acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			id    int64
			count int
		}
		rows := func(ps []*narrator.Project) []row {
			out := []row{}
			for _, p := range ps {
				out = append(out, row{p.ID, p.AudioCount})
			}
			return out
		}
		wantEqual(t, "account projects", rows(list), []row{{p1.ID, 2}, {p3.ID, 0}})
		all, err := b.store.ListProjects(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "all projects", rows(all), []row{{p1.ID, 2}, {p2.ID, 1}, {p3.ID, 0}})
		if got := mustProjectCount(t, b.store, p1); got != 2 {
			t.Errorf("FindProject AudioCount = %d, want 2", got)
		}
		none, err := b.store.ListProjects(ctx, 999)
		if err != nil || none == nil || len(none) != 0 {
			t.Fatalf("ListProjects(missing) = %#v, %v; want empty slice", none, err)
		}
	}},
	{"SpeechRate", func(t *testing.T, b *bundle) {
		ctx := t.Context()
		acc := mustAccount(t, b.store, "Acme")
		plain := mustProjectOf(t, b.store, acc.ID)
		if plain.SpeechRate != narrator.DefaultSpeechRate {
			t.Errorf("created without a rate: SpeechRate = %g, want %g", plain.SpeechRate, narrator.DefaultSpeechRate)
		}
		fast := newProject(acc.ID, "Fast")
		fast.SpeechRate = 1.25
		if err := b.store.CreateProject(ctx, fast); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.CreateAPIKey(ctx, acc.ID, hashOf("rate"), "nk_rat"); err != nil {
			t.Fatal(err)
		}
		a := mustAudio(t, b.store, fast.ID, "")
		rates := func() []float64 {
			t.Helper()
			found, err := b.store.FindProject(ctx, acc.ID, fast.ID)
			if err != nil {
				t.Fatal(err)
			}
			list, err := b.store.ListProjects(ctx, acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			authorized, err := b.store.AuthorizeProject(ctx, hashOf("rate"), fast.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, forSynthesis, err := b.store.AudioForSynthesis(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return []float64{found.SpeechRate, list[1].SpeechRate, authorized.SpeechRate, forSynthesis.SpeechRate}
		}
		wantEqual(t, "rates read after create", rates(), []float64{1.25, 1.25, 1.25, 1.25})

		jobs := len(b.rec.Synthesized())
		got, err := b.store.SetSpeechRate(ctx, fast.ID, 0.75)
		if err != nil {
			t.Fatal(err)
		}
		if got.SpeechRate != 0.75 || got.ID != fast.ID || got.Title != "Fast" {
			t.Errorf("SetSpeechRate = %+v, want the project at 0.75", got)
		}
		wantEqual(t, "rates read after SetSpeechRate", rates(), []float64{0.75, 0.75, 0.75, 0.75})
		// A rate change needs no new speech (narrator.PlanSpeechRate).
		if n := len(b.rec.Synthesized()); n != jobs {
			t.Errorf("SetSpeechRate queued %d synthesis jobs, want none", n-jobs)
		}
		after, err := b.store.FindAudio(ctx, fast.ID, itoa(a.ID))
		if err != nil {
			t.Fatal(err)
		}
		if after.Revision != a.Revision || after.State != a.State {
			t.Errorf("audio after SetSpeechRate at revision %d, %s; want %d, %s", after.Revision, after.State, a.Revision, a.State)
		}
		if got, err := b.store.SetSpeechRate(ctx, fast.ID, 0); err != nil || got.SpeechRate != narrator.DefaultSpeechRate {
			t.Errorf("SetSpeechRate(0) = %+v, %v; want the default rate", got, err)
		}
		_, err = b.store.SetSpeechRate(ctx, fast.ID, 2.5)
		wantCode(t, err, narrator.EINVALID)
		_, err = b.store.SetSpeechRate(ctx, 999, 1)
		wantCode(t, err, narrator.ENOTFOUND)
		bad := newProject(acc.ID, "Too fast")
		bad.SpeechRate = 3
		wantCode(t, b.store.CreateProject(ctx, bad), narrator.EINVALID)
	}},
	{"Clips", testClips},
}

// testCreateAudioWithKey checks that a create made with a key stores its audio only if the
// key is a live key of the project's account when the create is made; each of many
// concurrent creates, which a store may commit together, by its own key.
func testCreateAudioWithKey(t *testing.T, b *bundle) {
	ctx := t.Context()
	acc := mustAccount(t, b.store, "Acme")
	other := mustAccount(t, b.store, "Other")
	var old *narrator.APIKey
	for key, id := range map[string]int64{"mine": acc.ID, "theirs": other.ID, "old": acc.ID} {
		k, err := b.store.CreateAPIKey(ctx, id, hashOf(key), "nk_"+key)
		if err != nil {
			t.Fatal(err)
		}
		if key == "old" {
			old = k
		}
	}
	p := mustProjectOf(t, b.store, acc.ID)
	theirs := mustProjectOf(t, b.store, other.ID)
	wantRevokedKeyRefused(t, b, p, old)
	cases := []keyCase{
		{"mine", p.ID, ""},
		{"theirs", theirs.ID, ""},
		{"mine", theirs.ID, narrator.ENOTFOUND},
		{"theirs", p.ID, narrator.ENOTFOUND},
		{"mine", 999, narrator.ENOTFOUND},
		{"wrong", p.ID, narrator.EUNAUTHORIZED},
		{"old", p.ID, narrator.EUNAUTHORIZED},
		{"wrong", 999, narrator.EUNAUTHORIZED},
	}
	const rounds = 12
	var wg sync.WaitGroup
	errs := make(chan error, rounds*len(cases))
	for i := range rounds * len(cases) {
		c := cases[i%len(cases)]
		wg.Go(func() {
			a := newAudio(c.projectID, fmt.Sprintf("x%d", i))
			// In the same groups: creates without a key, and
			// without an external ID.
			// (The suite's accounts queue at most 100.)
			if i%4 == 0 {
				plain := newAudio(p.ID, "")
				if i%8 == 0 {
					plain.ExternalID = fmt.Sprintf("plain%d", i)
				}
				if _, err := b.store.CreateAudio(ctx, plain); err != nil {
					errs <- fmt.Errorf("create without a key: %v", err)
				}
			}
			if i%2 == 0 {
				a.ExternalID = ""
				a.Title = fmt.Sprintf("x%d", i)
			}
			created, err := b.store.CreateAudioWithKey(ctx, hashOf(c.key), a)
			switch {
			case c.code != "" && narrator.ErrorCode(err) != c.code:
				errs <- fmt.Errorf("key %q, project %d: %v, want code %s", c.key, c.projectID, err, c.code)
			case c.code == "" && (err != nil || !created || a.ID == 0):
				errs <- fmt.Errorf("key %q, project %d: %v, %v, %+v", c.key, c.projectID, created, err, a)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantStoredByKey(t, b, cases, rounds, p, theirs)
	// And by count: "before", every create without a key, and the
	// good ones (one case in len(cases) each).
	for _, want := range []struct {
		account, project int64
		count            int
	}{
		{acc.ID, p.ID, 1 + rounds*len(cases)/4 + rounds},
		{other.ID, theirs.ID, rounds},
	} {
		got, err := b.store.FindProject(ctx, want.account, want.project)
		if err != nil || got.AudioCount != want.count {
			t.Errorf("project %d: %+v, %v; want %d audios", want.project, got, err, want.count)
		}
	}
}

// keyCase is a create made with a key in a project, and the error code it must give ("" for
// none).
type keyCase struct {
	key       string
	projectID int64
	code      string
}

// wantRevokedKeyRefused checks that the key "old", of p's account, creates an audio, and once
// revoked (as old) creates none and updates none.
func wantRevokedKeyRefused(t *testing.T, b *bundle, p *narrator.Project, old *narrator.APIKey) {
	t.Helper()
	ctx := t.Context()
	if created, err := b.store.CreateAudioWithKey(ctx, hashOf("old"), newAudio(p.ID, "before")); err != nil || !created {
		t.Fatalf("create with a live key = %v, %v", created, err)
	}
	if err := b.store.RevokeAPIKey(ctx, p.AccountID, old.ID); err != nil {
		t.Fatal(err)
	}
	_, err := b.store.CreateAudioWithKey(ctx, hashOf("old"), newAudio(p.ID, "after"))
	wantCode(t, err, narrator.EUNAUTHORIZED)
	// Nor can it update the audio it made.
	changed := newAudio(p.ID, "before")
	changed.Title = "Changed"
	_, err = b.store.CreateAudioWithKey(ctx, hashOf("old"), changed)
	wantCode(t, err, narrator.EUNAUTHORIZED)
	if got, err := b.store.FindAudio(ctx, p.ID, "before"); err != nil || got.Title == "Changed" {
		t.Fatalf("after a refused update: %+v, %v", got, err)
	}
}

// wantStoredByKey checks that exactly the creates of cases, made rounds times each in order,
// with a good key were stored, each in its own project (p or theirs) only.
func wantStoredByKey(t *testing.T, b *bundle, cases []keyCase, rounds int, p, theirs *narrator.Project) {
	t.Helper()
	ctx := t.Context()
	for i := range rounds * len(cases) {
		c := cases[i%len(cases)]
		if i%2 == 0 {
			continue // no external ID to find it by; counted below
		}
		_, err := b.store.FindAudio(ctx, c.projectID, fmt.Sprintf("x%d", i))
		if stored := err == nil; stored != (c.code == "") {
			t.Errorf("key %q, project %d: stored %v (%v)", c.key, c.projectID, stored, err)
		}
		if c.projectID != 999 {
			_, err := b.store.FindAudio(ctx, p.ID+theirs.ID-c.projectID, fmt.Sprintf("x%d", i))
			wantCode(t, err, narrator.ENOTFOUND)
		}
	}
}
