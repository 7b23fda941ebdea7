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
	if _, err := s.ItemAudio(&narrator.FeedItem{Title: "no key"}); narrator.ErrorCode(err) != narrator.EINVALID {
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

// TestItemAudioTitleAndLanguage: an untitled item makes an untitled audio,
// not one titled with its URL; a title or author over its limit is cut and
// named in Cut; the item's language goes in the metadata, outside the hash.
func TestItemAudioTitleAndLanguage(t *testing.T) {
	t.Parallel()
	s := narrator.NewSource(7, "https://example.com/feed.xml")
	s.ID = 3
	for _, tc := range []struct {
		name      string
		item      narrator.FeedItem
		wantTitle string
		wantCut   []string
		wantLang  string
	}{
		{"untitled", narrator.FeedItem{GUID: "1", Link: "http://scripting.com/2017/05/09/a.html", Summary: "Text."}, "", nil, ""},
		{"long title", narrator.FeedItem{GUID: "2", Title: strings.Repeat("T", narrator.MaxTitleChars+1), Summary: "Text."}, strings.Repeat("T", narrator.MaxTitleChars), []string{"title"}, ""},
		{"long author", narrator.FeedItem{GUID: "3", Title: "A", Author: strings.Repeat("a", narrator.MaxAuthorChars+1), Summary: "Text."}, "A", []string{"author"}, ""},
		{"language", narrator.FeedItem{GUID: "4", Title: "A", Summary: "Text.", Language: " fr-CA "}, "A", nil, "fr-CA"},
		{"not a language", narrator.FeedItem{GUID: "5", Title: "A", Summary: "Text.", Language: "<script>"}, "A", nil, ""},
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
