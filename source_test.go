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
	it := &narrator.FeedItem{GUID: "urn:1", Link: "https://example.com/a", Title: "A", Content: "<p>Full</p>", Summary: "Short",
		Author: "Ann", Categories: []string{"News", "World"}, Published: published}
	a, hash, err := s.ItemAudio(it)
	if err != nil {
		t.Fatal(err)
	}
	want := &narrator.Audio{ProjectID: 7, ExternalID: "feed-3:urn:1", Title: "A", Body: "<p>Full</p>", Author: "Ann", ArticleURL: "https://example.com/a",
		Metadata: map[string]string{"feed": "3", "categories": "News, World", "published": "2026-05-01T09:00:00Z"}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("ItemAudio (-want +got):\n%s", diff)
	}
	if _, again, _ := s.ItemAudio(it); again != hash {
		t.Error("the same item hashed differently")
	}
	it.Content = "<p>Fuller</p>"
	if _, changed, _ := s.ItemAudio(it); changed == hash {
		t.Error("a changed item hashed the same")
	}
	s.Mapping = map[string]string{"body": "summary", "external_id": "link"}
	a, _, err = s.ItemAudio(it)
	if err != nil || a.Body != "Short" || a.ExternalID != "feed-3:https://example.com/a" {
		t.Errorf("mapped ItemAudio = %+v, %v", a, err)
	}
	if id := narrator.ItemExternalID(3, strings.Repeat("x", 300)); len(id) > narrator.MaxExternalIDChars || !strings.HasPrefix(id, "feed-3:sha256:") {
		t.Errorf("ItemExternalID of a long key = %q", id)
	}
	if _, _, err := s.ItemAudio(&narrator.FeedItem{Title: "no key"}); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("ItemAudio of an item without guid or link: %v, want EINVALID", err)
	}
}

func TestBackfill(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	var items []*narrator.FeedItem
	for i := range 30 { // newest first, one a day
		items = append(items, &narrator.FeedItem{GUID: string(rune('a' + i)), Published: now.AddDate(0, 0, -i)})
	}
	guids := func(its []*narrator.FeedItem) string {
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

func TestFairReads(t *testing.T) {
	t.Parallel()
	// Feeds 1-9 of account 1 fell due first, then feed 20 of account 2,
	// then feed 30 of account 3.
	var many []narrator.DueFeed
	for id := range int64(9) {
		many = append(many, narrator.DueFeed{ID: id + 1, AccountID: 1})
	}
	many = append(many, narrator.DueFeed{ID: 20, AccountID: 2}, narrator.DueFeed{ID: 30, AccountID: 3})
	for _, tc := range []struct {
		name     string
		due      []narrator.DueFeed
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
