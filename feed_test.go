package narrator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestFeedValidate(t *testing.T) {
	t.Parallel()
	valid := func() narrator.Feed {
		return narrator.Feed{Title: "Daily", Description: "News, read aloud.", Author: "Acme", ImageURL: "https://x.test/a.png",
			Language: "en-US", Category: "News > Tech News"}
	}
	cases := []struct {
		name string
		edit func(f *narrator.Feed)
		ok   bool
	}{
		{"valid", func(*narrator.Feed) {}, true},
		{"top-level category", func(f *narrator.Feed) { f.Category = "Technology" }, true},
		{"no category", func(f *narrator.Feed) { f.Category = "" }, true},
		{"no image", func(f *narrator.Feed) { f.ImageURL = "" }, true},
		{"language only", func(f *narrator.Feed) { f.Language = "fr" }, true},
		{"script and region", func(f *narrator.Feed) { f.Language = "zh-Hant-TW" }, true},
		{"blank title", func(f *narrator.Feed) { f.Title = " " }, false},
		{"long title", func(f *narrator.Feed) { f.Title = strings.Repeat("é", narrator.MaxFeedTitleChars+1) }, false},
		{"long description", func(f *narrator.Feed) { f.Description = strings.Repeat("a", narrator.MaxFeedDescriptionChars+1) }, false},
		{"NUL in author", func(f *narrator.Feed) { f.Author = "a\x00b" }, false},
		{"invalid UTF-8", func(f *narrator.Feed) { f.Description = "\xff" }, false},
		{"relative image", func(f *narrator.Feed) { f.ImageURL = "/a.png" }, false},
		{"javascript image", func(f *narrator.Feed) { f.ImageURL = "javascript:alert(1)" }, false},
		{"unknown category", func(f *narrator.Feed) { f.Category = "Cooking" }, false},
		{"sub of another top", func(f *narrator.Feed) { f.Category = "Arts > Tech News" }, false},
		{"top without sub", func(f *narrator.Feed) { f.Category = "News > " }, false},
		{"sub alone", func(f *narrator.Feed) { f.Category = "Tech News" }, false},
		{"locale with underscore", func(f *narrator.Feed) { f.Language = "en_US" }, false},
		{"no language", func(f *narrator.Feed) { f.Language = "" }, false},
		{"digit in primary", func(f *narrator.Feed) { f.Language = "e1" }, false},
		{"empty subtag", func(f *narrator.Feed) { f.Language = "en--US" }, false},
		{"owner", func(f *narrator.Feed) { f.OwnerName, f.OwnerEmail = "Acme Audio", "podcasts@acme.example" }, true},
		{"owner without email", func(f *narrator.Feed) { f.OwnerName = "Acme Audio" }, true},
		{"owner email without name", func(f *narrator.Feed) { f.OwnerEmail = "podcasts@acme.example" }, false},
		{"owner email not an address", func(f *narrator.Feed) { f.OwnerName, f.OwnerEmail = "Acme", "podcasts at acme" }, false},
		{"owner email with a name in it", func(f *narrator.Feed) { f.OwnerName, f.OwnerEmail = "Acme", "Acme <p@acme.example>" }, false},
		{"owner email without domain dot", func(f *narrator.Feed) { f.OwnerName, f.OwnerEmail = "Acme", "p@localhost" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := valid()
			c.edit(&f)
			err := f.Validate()
			if c.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !c.ok && narrator.ErrorCode(err) != narrator.EINVALID {
				t.Fatalf("Validate = %v, want EINVALID", err)
			}
		})
	}
}

func TestFeedCategoriesAllValid(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range narrator.FeedCategories() {
		names := []string{c.Name}
		for _, s := range c.Subs {
			names = append(names, c.Name+narrator.FeedCategorySeparator+s)
		}
		for _, name := range names {
			f := narrator.Feed{Title: "T", Language: "en", Category: name}
			if err := f.Validate(); err != nil {
				t.Errorf("%q: %v", name, err)
			}
			n++
		}
	}
	if cats := narrator.FeedCategories(); len(cats) != 19 || n != 19+91 {
		t.Errorf("%d categories, %d names; Apple lists 19 and 110", len(cats), n)
	}
	if top, sub := narrator.SplitFeedCategory("TV & Film > After Shows"); top != "TV & Film" || sub != "After Shows" {
		t.Errorf("SplitFeedCategory = %q, %q", top, sub)
	}
}

func TestFeedToken(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		tok, err := narrator.NewFeedToken()
		if err != nil {
			t.Fatal(err)
		}
		if err := narrator.ValidateFeedToken(tok); err != nil {
			t.Fatalf("ValidateFeedToken(%q): %v", tok, err)
		}
		if seen[tok] {
			t.Fatalf("token %q twice", tok)
		}
		seen[tok] = true
	}
	for _, bad := range []string{"", "short", strings.Repeat("a", 42), strings.Repeat("a", 44), strings.Repeat("+", 43), strings.Repeat("a", 42) + "/",
		strings.Repeat("a", 42) + "B"} { // the last character has bits past the 256
		if narrator.ErrorCode(narrator.ValidateFeedToken(bad)) != narrator.EINVALID {
			t.Errorf("ValidateFeedToken(%q) accepted it", bad)
		}
	}
	if got := narrator.FeedPath("abc"); got != "/feeds/abc.xml" {
		t.Errorf("FeedPath = %q", got)
	}
}

func TestNewFeedSettings(t *testing.T) {
	t.Parallel()
	f := narrator.NewFeedSettings(&narrator.Project{ID: 3, Title: "Daily", Language: "pt_BR"})
	if f.ProjectID != 3 || f.Title != "Daily" || f.Language != "pt-BR" || !f.Enabled || f.Token != "" {
		t.Errorf("NewFeedSettings = %+v", f)
	}
	if err := f.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestFeedContentLastModified(t *testing.T) {
	t.Parallel()
	t1, t2 := time.Unix(100, 0), time.Unix(200, 0)
	for _, c := range []struct {
		feed, audios, want time.Time
	}{
		{t1, t2, t2},
		{t2, t1, t2},
		{t1, time.Time{}, t1},
	} {
		fc := narrator.FeedContent{Feed: &narrator.Feed{UpdatedAt: c.feed}, AudiosChangedAt: c.audios}
		if got := fc.LastModified(); !got.Equal(c.want) {
			t.Errorf("LastModified(feed %v, audios %v) = %v, want %v", c.feed, c.audios, got, c.want)
		}
	}
}

func TestFeedBodyCharsOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mode string
		want int
	}{
		{"public", narrator.AccessPublic, narrator.FeedBodyChars},
		{"signed", narrator.AccessSigned, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := narrator.DefaultAccess(1)
			a.Mode = tt.mode
			if got := narrator.FeedBodyCharsOf(a); got != tt.want {
				t.Errorf("FeedBodyCharsOf(%s) = %d, want %d", tt.mode, got, tt.want)
			}
		})
	}
}

func TestFeedItemDate(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		name      string
		published string // "" for none
		want      time.Time
		wantOK    bool
	}{
		{"none", "", created.UTC(), false},
		{"RFC 3339", "2026-04-01T10:00:00+02:00", time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC), true},
		{"RFC 3339 with fraction", "2026-04-01T10:00:00.5Z", time.Date(2026, 4, 1, 10, 0, 0, 5e8, time.UTC), true},
		{"date", " 2026-04-01 ", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), true},
		{"words", "last Tuesday", created.UTC(), false},
		{"RFC 1123", "Wed, 01 Apr 2026 10:00:00 +0200", created.UTC(), false},
		{"year 0", "0000-01-01", created.UTC(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &narrator.Audio{CreatedAt: created, Metadata: map[string]string{}}
			if tt.published != "" {
				a.Metadata[narrator.MetadataPublished] = tt.published
			}
			if got, ok := narrator.ArticlePublished(a); ok != tt.wantOK || ok && !got.Equal(tt.want) {
				t.Errorf("ArticlePublished = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			if got := narrator.FeedItemDate(a, narrator.DefaultPublication(1)); !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("FeedItemDate = %v, want %v in UTC", got, tt.want)
			}
		})
	}
}

func TestPublishedAt(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	later, earlier := created.Add(3*time.Hour), created.Add(-time.Hour)
	tests := []struct {
		name string
		p    narrator.Publication
		want time.Time
	}{
		{"never decided", narrator.DefaultPublication(1), created},
		{"published later", narrator.Publication{State: narrator.PublicationPublished, UpdatedAt: later}, later},
		{"scheduled", narrator.Publication{State: narrator.PublicationScheduled, PublishAt: later, UpdatedAt: created}, later},
		{"scheduled before creation", narrator.Publication{State: narrator.PublicationScheduled, PublishAt: earlier}, created},
		{"draft", narrator.Publication{State: narrator.PublicationDraft, UpdatedAt: later}, created},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.p.PublishedAt(created); !got.Equal(tt.want) {
				t.Errorf("PublishedAt = %v, want %v", got, tt.want)
			}
			a := &narrator.Audio{CreatedAt: created}
			if got := narrator.FeedItemDate(a, tt.p); !got.Equal(tt.want) {
				t.Errorf("FeedItemDate = %v, want %v", got, tt.want)
			}
		})
	}
}
