package narrator_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestCanonicalURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"HTTPS://News.Example:443/a/b?x=1#top": "https://news.example/a/b?x=1",
		"http://news.example:80":               "http://news.example/",
		"http://news.example:8080/a?":          "http://news.example:8080/a",
		"https://news.example/Case/Kept":       "https://news.example/Case/Kept",
		"ftp://news.example/a":                 "ftp://news.example/a",
		"not a url":                            "not a url",
	} {
		if got := narrator.CanonicalURL(in); got != want {
			t.Errorf("CanonicalURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPageAudio(t *testing.T) {
	t.Parallel()
	p := &narrator.Page{URL: "https://News.Example/story#x", Title: "T", Author: strings.Repeat("é", narrator.MaxAuthorChars+5), Language: "fr", Body: "<p>Body</p>"}
	got, err := p.Audio(7, "", map[string]string{"desk": "city"})
	if err != nil {
		t.Fatal(err)
	}
	want := &narrator.Audio{
		ProjectID: 7, ExternalID: "https://news.example/story", Title: "T",
		Author: strings.Repeat("é", narrator.MaxAuthorChars), Body: "<p>Body</p>",
		ArticleURL: "https://news.example/story", Metadata: map[string]string{"desk": "city", "language": "fr"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the imported audio is not valid: %v", err)
	}
	given, err := p.Audio(7, "story-1", map[string]string{"language": "fr-CA"})
	if err != nil || given.ExternalID != "story-1" || given.Metadata["language"] != "fr-CA" {
		t.Errorf("given external ID and language: %+v, %v", given, err)
	}
	long := &narrator.Page{URL: "https://news.example/" + strings.Repeat("a", 300), Body: "<p>x</p>"}
	if _, err := long.Audio(7, "", nil); narrator.ErrorCode(err) != narrator.EINVALID || !strings.Contains(narrator.ErrorMessage(err), "external_id is required") {
		t.Errorf("a URL too long for an external ID: %v", err)
	}
	if a, err := long.Audio(7, "mine", nil); err != nil || a.ExternalID != "mine" {
		t.Errorf("with an external ID of its own: %+v, %v", a, err)
	}
	huge := &narrator.Page{URL: "https://news.example/a", Body: strings.Repeat("x", narrator.MaxBodyChars+1)}
	if _, err := huge.Audio(7, "", nil); narrator.ErrorCode(err) != narrator.EUNREADABLE {
		t.Errorf("an article over the limit: %v; want EUNREADABLE", err)
	}
}
