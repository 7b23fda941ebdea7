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
