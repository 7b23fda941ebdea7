package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

func TestArticleImageURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" https://cdn.example/a.jpg ": "https://cdn.example/a.jpg",
		"http://cdn.example/a.png":    "http://cdn.example/a.png",
		"/relative.jpg":               "",
		"javascript:alert(1)":         "",
		"data:image/png;base64,AAAA":  "",
		"ftp://cdn.example/a.jpg":     "",
		"":                            "",
	} {
		if got := narrator.ArticleImageURL(in); got != want {
			t.Errorf("ArticleImageURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArticleImageSources: feed items and imported pages put their image
// in the metadata, unless the API's metadata names one; the API's must be
// an http or https URL.
func TestArticleImageSources(t *testing.T) {
	t.Parallel()
	src := &narrator.Source{ID: 3, ProjectID: 1}
	fa, err := src.ItemAudio(&narrator.SourceItem{GUID: "a", Content: "Text.", Image: "https://cdn.example/item.jpg"})
	if err != nil || narrator.ArticleImage(fa.Audio) != "https://cdn.example/item.jpg" {
		t.Errorf("feed item: %v, %v", err, fa)
	}
	fa, err = src.ItemAudio(&narrator.SourceItem{GUID: "b", Content: "Text.", Image: "javascript:x"})
	if err != nil || narrator.ArticleImage(fa.Audio) != "" || fa.Audio.Metadata[narrator.MetadataImage] != "" {
		t.Errorf("feed item with a bad image: %v, %v", err, fa.Audio.Metadata)
	}
	p := &narrator.Page{URL: "https://news.example/a", Title: "T", Body: "<p>x</p>", Image: "https://cdn.example/og.jpg"}
	a, err := p.Audio(1, "", nil)
	if err != nil || narrator.ArticleImage(a) != "https://cdn.example/og.jpg" {
		t.Errorf("page: %v, %v", err, a)
	}
	a, err = p.Audio(1, "", map[string]string{narrator.MetadataImage: "https://cdn.example/given.jpg"})
	if err != nil || narrator.ArticleImage(a) != "https://cdn.example/given.jpg" {
		t.Errorf("page with the API's image: %v, %v", err, a)
	}
	for v, ok := range map[string]bool{"https://cdn.example/a.jpg": true, "": true, "not a url": false, "javascript:alert(1)": false} {
		a := &narrator.Audio{ProjectID: 1, Title: "T", Body: "x", Metadata: map[string]string{narrator.MetadataImage: v}}
		if err := a.Validate(); (err == nil) != ok || err != nil && narrator.ErrorCode(err) != narrator.EINVALID {
			t.Errorf("metadata image %q: %v", v, err)
		}
	}
}

// TestPlayerArtwork: the lock screen shows the article's image only from
// the article's own origin or an origin the project allows.
func TestPlayerArtwork(t *testing.T) {
	t.Parallel()
	access := &narrator.ProjectAccess{AllowedOrigins: []string{"https://img.news.example"}}
	for _, tc := range []struct {
		name, article, image string
		access               *narrator.ProjectAccess
		want                 string
	}{
		{"the article's origin", "https://news.example/a", "https://news.example/wp-content/a.jpg", nil, "https://news.example/wp-content/a.jpg"},
		{"the same origin written otherwise", "https://News.Example:443/a", "https://news.example/a.jpg", nil, "https://news.example/a.jpg"},
		{"an allowed origin", "https://news.example/a", "https://img.news.example/a.jpg", access, "https://img.news.example/a.jpg"},
		{"a third party", "https://news.example/a", "https://cdn.example/a.jpg", access, ""},
		{"another scheme", "https://news.example/a", "http://news.example/a.jpg", nil, ""},
		{"another port", "https://news.example/a", "https://news.example:8443/a.jpg", nil, ""},
		{"no article URL", "", "https://news.example/a.jpg", nil, ""},
		{"no image", "https://news.example/a", "", access, ""},
		{"not a URL", "https://news.example/a", "javascript:alert(1)", nil, ""},
	} {
		a := &narrator.Audio{ArticleURL: tc.article, Metadata: map[string]string{narrator.MetadataImage: tc.image}}
		if got := narrator.PlayerArtwork(a, tc.access); got != tc.want {
			t.Errorf("%s: PlayerArtwork = %q, want %q", tc.name, got, tc.want)
		}
	}
}
