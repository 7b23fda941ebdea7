package extract_test

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/narrator/narrator/internal/extract"
)

// allowedTags matches every tag a body may hold.
var allowedTags = regexp.MustCompile(`^</?(?:h[2-6]|p|ul|ol|li|blockquote|pre)>$`)

var anyTag = regexp.MustCompile(`<[^>]*>`)

// FuzzExtract reads any page. Extract never panics; a body it returns
// holds only the structural tags, and at least a few words of text.
func FuzzExtract(f *testing.F) {
	f.Add("<html lang=en><head><title>T</title><link rel=canonical href=/c></head><body><article><h1>T</h1>"+story+"</article></body></html>", "text/html")
	f.Add("<p>short</p>", "")
	f.Add("<div class=comments>"+story+"</div><nav>"+story+"</nav>", "text/html; charset=windows-1252")
	f.Add("<ul><li><blockquote><pre>\n\n"+story+"</pre></blockquote></li></ul>", "text/html")
	base, _ := url.Parse("https://site.example/a")
	f.Fuzz(func(t *testing.T, page, contentType string) {
		a, err := extract.Extract([]byte(page), contentType, base)
		if err != nil {
			return
		}
		for _, tag := range anyTag.FindAllString(a.Body, -1) {
			if !allowedTags.MatchString(tag) {
				t.Fatalf("body holds the tag %q", tag)
			}
		}
		if _, err := url.Parse(a.URL); err != nil || a.URL == "" {
			t.Fatalf("URL %q", a.URL)
		}
	})
}
