package narrator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
)

func TestSourceValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(s *narrator.Source)
		want   string // a word of the message; "" for valid
	}{
		{"default", func(*narrator.Source) {}, ""},
		{"no url", func(s *narrator.Source) { s.URL = "" }, "url"},
		{"ftp url", func(s *narrator.Source) { s.URL = "ftp://example.com/feed" }, "url"},
		{"header", func(s *narrator.Source) { s.Header = map[string]string{"Authorization": "Bearer x"} }, ""},
		{"bad header name", func(s *narrator.Source) { s.Header = map[string]string{"Bad Name": "x"} }, "header name"},
		{"host header", func(s *narrator.Source) { s.Header = map[string]string{"host": "x"} }, "Host"},
		{"header newline", func(s *narrator.Source) { s.Header = map[string]string{"X-Key": "a\r\nHost: b"} }, "one line"},
		{"mapping", func(s *narrator.Source) { s.Mapping = map[string]string{"body": "summary"} }, ""},
		{"mapping unknown field", func(s *narrator.Source) { s.Mapping = map[string]string{"voice": "title"} }, "voice"},
		{"mapping unknown item field", func(s *narrator.Source) { s.Mapping = map[string]string{"body": "enclosure"} }, "enclosure"},
		{"interval too short", func(s *narrator.Source) { s.Interval = 30 * time.Second }, "interval"},
		{"backfill negative", func(s *narrator.Source) { s.BackfillItems = -1 }, "backfill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := narrator.NewSource(1, "https://example.com/feed.xml")
			tc.change(s)
			err := s.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), tc.want) {
				t.Fatalf("Validate() = %v, want EINVALID mentioning %q", err, tc.want)
			}
		})
	}
}

func TestItemAudio(t *testing.T) {
	t.Parallel()
	s := narrator.NewSource(7, "https://example.com/feed.xml")
	s.ID = 3
	published := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	it := &narrator.SourceItem{GUID: "urn:1", Link: "https://example.com/a", Title: "A", Content: "<p>Full</p>", Summary: "Short",
		Author: "Ann", Categories: []string{"News", "World"}, Published: published}
	x, err := s.ItemAudio(it)
	if err != nil {
		t.Fatal(err)
	}
	want := &narrator.Audio{ProjectID: 7, ExternalID: "feed-3:urn:1", Title: "A", Body: "<p>Full</p>", Author: "Ann", ArticleURL: "https://example.com/a",
		Metadata: map[string]string{"feed": "3", "categories": "News, World", "published": "2026-05-01T09:00:00Z"}}
	if diff := cmp.Diff(want, x.Audio); diff != "" {
		t.Errorf("ItemAudio (-want +got):\n%s", diff)
	}
	if again, _ := s.ItemAudio(it); again.Hash != x.Hash {
		t.Error("the same item hashed differently")
	}
	it.Content = "<p>Fuller</p>"
	if changed, _ := s.ItemAudio(it); changed.Hash == x.Hash {
		t.Error("a changed item hashed the same")
	}
	s.Mapping = map[string]string{"body": "summary", "external_id": "link"}
	x, err = s.ItemAudio(it)
	if err != nil || x.Audio.Body != "Short" || x.Audio.ExternalID != "feed-3:https://example.com/a" {
		t.Errorf("mapped ItemAudio = %+v, %v", x, err)
	}
	if id := narrator.ItemExternalID(3, strings.Repeat("x", 300)); len(id) > narrator.MaxExternalIDChars || !strings.HasPrefix(id, "feed-3:sha256:") {
		t.Errorf("ItemExternalID of a long key = %q", id)
	}
	if _, err := s.ItemAudio(&narrator.SourceItem{Title: "no key"}); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("ItemAudio of an item without guid or link: %v, want EINVALID", err)
	}
}

func TestBackfill(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	var items []*narrator.SourceItem
	for i := range 30 { // newest first, one a day
		items = append(items, &narrator.SourceItem{GUID: string(rune('a' + i)), Published: now.AddDate(0, 0, -i)})
	}
	guids := func(its []*narrator.SourceItem) string {
		var b strings.Builder
		for _, it := range its {
			b.WriteString(it.GUID)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		n     int
		since time.Duration
		want  string
	}{
		{"default", 0, 0, "abcdefghij"},
		{"latest 3", 3, 0, "abc"},
		{"newer than 2 days", 0, 48 * time.Hour, "abc"},
		{"both", 2, 5 * 24 * time.Hour, "ab"},
	} {
		s := narrator.NewSource(1, "https://example.com/f")
		s.BackfillItems, s.BackfillSince = tc.n, tc.since
		if got := guids(s.Backfill(items, now)); got != tc.want {
			t.Errorf("%s: Backfill = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNextPoll(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	s := narrator.NewSource(1, "https://example.com/f")
	for failures, want := range []time.Duration{10 * time.Minute, 20 * time.Minute, 40 * time.Minute} {
		if got := s.NextPoll(now, failures).Sub(now); got != want {
			t.Errorf("NextPoll after %d failures: in %s, want %s", failures, got, want)
		}
	}
	if got := s.NextPoll(now, 50).Sub(now); got != narrator.MaxBackoff {
		t.Errorf("NextPoll after 50 failures: in %s, want %s", got, narrator.MaxBackoff)
	}
}

func TestSubscriptionVerify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	const topic, nonce = "https://example.com/feed", "n0nce"
	pending := func() narrator.Subscription {
		s := narrator.Subscription{Hub: "https://hub.example/", Topic: topic, Secret: "s", Nonce: nonce}
		s.Request(narrator.WebSubSubscribe, topic, now)
		return s
	}
	for _, tc := range []struct {
		name        string
		sub         func() narrator.Subscription
		mode, topic string
		nonce       string
		lease       time.Duration
		at          time.Time
		want        bool
		expires     time.Time // when want
	}{
		{"the pending request", pending, "subscribe", topic, nonce, time.Hour, now.Add(time.Minute), true, now.Add(time.Minute + time.Hour)},
		{"a year is capped", pending, "subscribe", topic, nonce, 365 * 24 * time.Hour, now, true, now.Add(narrator.WebSubLease)},
		{"no lease named", pending, "subscribe", topic, nonce, 0, now, true, now.Add(narrator.WebSubLease)},
		{"another topic", pending, "subscribe", "https://elsewhere.example/", nonce, time.Hour, now, false, time.Time{}},
		{"another mode", pending, "unsubscribe", topic, nonce, 0, now, false, time.Time{}},
		{"an hour late", pending, "subscribe", topic, nonce, time.Hour, now.Add(time.Hour), false, time.Time{}},
		{"before it was sent", pending, "subscribe", topic, nonce, time.Hour, now.Add(-time.Second), false, time.Time{}},
		{"nothing pending", func() narrator.Subscription {
			s := pending()
			s.Pending = narrator.WebSubRequest{}
			return s
		}, "subscribe", topic, nonce, time.Hour, now, false, time.Time{}},
		{"no nonce", pending, "subscribe", topic, "", time.Hour, now, false, time.Time{}},
		{"another nonce", pending, "subscribe", topic, "n0ncf", time.Hour, now, false, time.Time{}},
		{"a nonce's prefix", pending, "subscribe", topic, "n0nc", time.Hour, now, false, time.Time{}},
		{"no nonce on either side", func() narrator.Subscription {
			s := pending()
			s.Nonce = ""
			return s
		}, "subscribe", topic, "", time.Hour, now, false, time.Time{}},
		{"an empty topic", func() narrator.Subscription {
			s := pending()
			s.Pending.Topic = ""
			return s
		}, "subscribe", "", nonce, time.Hour, now, false, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sub := tc.sub()
			before := sub
			if got := sub.Verify(tc.mode, tc.topic, tc.nonce, tc.lease, tc.at); got != tc.want {
				t.Fatalf("Verify = %v; want %v", got, tc.want)
			}
			want := before
			if tc.want {
				want.Pending, want.ExpiresAt = narrator.WebSubRequest{}, tc.expires
			}
			if diff := cmp.Diff(want, sub); diff != "" {
				t.Errorf("subscription (-want +got):\n%s", diff)
			}
			// A request is verified once.
			if tc.want && sub.Verify(tc.mode, tc.topic, tc.nonce, tc.lease, tc.at) {
				t.Error("a second Verify of the same request was accepted")
			}
		})
	}
	// A pending unsubscribe, once verified, forgets the subscription.
	u := pending()
	u.Request(narrator.WebSubUnsubscribe, topic, now)
	if u.Verify(narrator.WebSubSubscribe, topic, nonce, time.Hour, now) || u.Verify(narrator.WebSubUnsubscribe, topic, "", 0, now) ||
		!u.Verify(narrator.WebSubUnsubscribe, topic, nonce, 0, now) || u != (narrator.Subscription{}) {
		t.Errorf("unsubscribe: %+v", u)
	}
	// A denial ends the pending subscribe only, at its callback only.
	s := pending()
	if s.Deny("https://elsewhere.example/", nonce, now) || s.Deny(topic, "", now) || s.Deny(topic, "guess", now) ||
		!s.Deny(topic, nonce, now) || s.Pending != (narrator.WebSubRequest{}) || s.Deny(topic, nonce, now) {
		t.Errorf("Deny: %+v", s)
	}
}

func TestSubscriptionHTTPSOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var s narrator.Subscription
	if s.Subscribe("http://hub.example/", "https://example.com/feed", now) {
		t.Error("Subscribe to a plain-http hub")
	}
	if !s.Subscribe("https://hub.example/", "https://example.com/feed", now) {
		t.Error("no Subscribe to a new https hub")
	}
	for _, tc := range []struct {
		sub  narrator.Subscription
		want bool
	}{
		{narrator.Subscription{Hub: "https://hub.example/", Secret: "s"}, true},
		{narrator.Subscription{Hub: "http://hub.example/", Secret: "s"}, false}, // sent in clear before Narrator refused it
		{narrator.Subscription{Hub: "https://hub.example/"}, false},
	} {
		if got := tc.sub.Authenticates(); got != tc.want {
			t.Errorf("%+v Authenticates = %v; want %v", tc.sub, got, tc.want)
		}
	}
}

// TestNewSubscription checks that each subscription gets its own secret and
// callback nonce, and that one made before nonces existed is made again at
// the next read.
func TestNewSubscription(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	const hub, topic = "https://hub.example/", "https://example.com/feed"
	a, b := narrator.NewSubscription(hub, topic), narrator.NewSubscription(hub, topic)
	if a.Hub != hub || a.Topic != topic || a.Secret == "" || a.Secret == b.Secret || a.Nonce == b.Nonce ||
		len(a.Nonce) != 22 || strings.Trim(a.Nonce, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		t.Errorf("NewSubscription: %+v and %+v; want distinct secrets and 128-bit base64url nonces", a, b)
	}
	live := a
	live.RequestedAt, live.ExpiresAt = now, now.Add(narrator.WebSubLease)
	if live.Subscribe(hub, topic, now) {
		t.Error("a live subscription is asked for again")
	}
	live.Nonce = ""
	if !live.Subscribe(hub, topic, now) {
		t.Error("a live subscription without a callback nonce is not asked for again")
	}
}

func TestItemChanged(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	seen := narrator.SeenItem{ExternalID: "feed-1:a", Hash: "h1", Date: t1}
	for _, tc := range []struct {
		name   string
		seen   narrator.SeenItem
		ok     bool
		hash   string
		date   time.Time
		pushed bool
		want   bool
	}{
		{"new", narrator.SeenItem{}, false, "h", time.Time{}, true, true},
		{"same", seen, true, "h1", t2, false, false},
		{"left out by the backfill", narrator.SeenItem{Hash: "-"}, true, "h2", t2, false, false},
		{"changed, read", seen, true, "h2", time.Time{}, false, true},
		{"changed, read, older", seen, true, "h2", t1.Add(-time.Hour), false, true},
		{"changed, pushed, newer", seen, true, "h2", t2, true, true},
		{"changed, pushed, same date", seen, true, "h2", t1, true, false},
		{"changed, pushed, older", seen, true, "h2", t1.Add(-time.Hour), true, false},
		{"changed, pushed, undated", seen, true, "h2", time.Time{}, true, false},
		{"changed, pushed, none recorded", narrator.SeenItem{Hash: "h1"}, true, "h2", t1, true, true},
	} {
		if got := narrator.ItemChanged(tc.seen, tc.ok, tc.hash, tc.date, tc.pushed); got != tc.want {
			t.Errorf("%s: ItemChanged = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestItemAudioTitleAndLanguage: an untitled item makes an untitled audio,
// not one titled with its URL; a title or author over its limit is cut and
// named in Cut; the item's language goes in the metadata, outside the hash.
func TestItemAudioTitleAndLanguage(t *testing.T) {
	t.Parallel()
	s := narrator.NewSource(7, "https://example.com/feed.xml")
	s.ID = 3
	for _, tc := range []struct {
		name      string
		item      narrator.SourceItem
		wantTitle string
		wantCut   []string
		wantLang  string
	}{
		{"untitled", narrator.SourceItem{GUID: "1", Link: "http://scripting.com/2017/05/09/a.html", Summary: "Text."}, "", nil, ""},
		{"long title", narrator.SourceItem{GUID: "2", Title: strings.Repeat("T", narrator.MaxTitleChars+1), Summary: "Text."}, strings.Repeat("T", narrator.MaxTitleChars), []string{"title"}, ""},
		{"long author", narrator.SourceItem{GUID: "3", Title: "A", Author: strings.Repeat("a", narrator.MaxAuthorChars+1), Summary: "Text."}, "A", []string{"author"}, ""},
		{"language", narrator.SourceItem{GUID: "4", Title: "A", Summary: "Text.", Language: " fr-CA "}, "A", nil, "fr-CA"},
		{"not a language", narrator.SourceItem{GUID: "5", Title: "A", Summary: "Text.", Language: "<script>"}, "A", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x, err := s.ItemAudio(&tc.item)
			if err != nil {
				t.Fatal(err)
			}
			if x.Audio.Title != tc.wantTitle || x.Audio.Metadata[narrator.MetadataLanguage] != tc.wantLang {
				t.Errorf("title %q, language %q; want %q, %q", x.Audio.Title, x.Audio.Metadata[narrator.MetadataLanguage], tc.wantTitle, tc.wantLang)
			}
			if diff := cmp.Diff(tc.wantCut, x.Cut); diff != "" {
				t.Errorf("Cut (-want +got):\n%s", diff)
			}
			other := tc.item
			other.Language = "de"
			if y, _ := s.ItemAudio(&other); y.Hash != x.Hash {
				t.Error("the item's language changed its hash")
			}
		})
	}
}

func TestFairReads(t *testing.T) {
	t.Parallel()
	// Feeds 1-9 of account 1 fell due first, then feed 20 of account 2,
	// then feed 30 of account 3.
	var many []narrator.DueSource
	for id := range int64(9) {
		many = append(many, narrator.DueSource{ID: id + 1, AccountID: 1})
	}
	many = append(many, narrator.DueSource{ID: 20, AccountID: 2}, narrator.DueSource{ID: 30, AccountID: 3})
	for _, tc := range []struct {
		name     string
		due      []narrator.DueSource
		inFlight map[int64]int
		limit    int
		want     []int64
	}{
		{"none due", nil, nil, 4, []int64{}},
		{"accounts take turns", many, nil, 4, []int64{1, 20, 30, 2}},
		{"limit", many, nil, 2, []int64{1, 20}},
		{"an account at its share waits", many, map[int64]int{1: narrator.MaxReadsPerAccount}, 4, []int64{20, 30}},
		{"feeds in flight count in the turn", many, map[int64]int{1: 1}, 4, []int64{20, 30, 1}},
		{"others' reads do not count", many, map[int64]int{4: 9}, 10, []int64{1, 20, 30, 2}},
		{"no room", many, nil, 0, []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, narrator.FairReads(tc.due, tc.inFlight, tc.limit)); diff != "" {
				t.Errorf("FairReads (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMayRead(t *testing.T) {
	t.Parallel()
	if !narrator.MayRead(narrator.MaxReadsPerAccount - 1) {
		t.Errorf("MayRead(%d) = false; want true", narrator.MaxReadsPerAccount-1)
	}
	if narrator.MayRead(narrator.MaxReadsPerAccount) {
		t.Errorf("MayRead(%d) = true; want false", narrator.MaxReadsPerAccount)
	}
}
