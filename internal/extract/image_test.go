package extract_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/extract"
)

// TestExtractImage: the article's image is the page's og:image, else its
// twitter:image, resolved against the page's URL; only http and https.
func TestExtractImage(t *testing.T) {
	t.Parallel()
	const article = `<article><h1>Title</h1><p>` + "Plenty of words make this page an article worth reading aloud today. " + `</p><p>More words follow in a second paragraph, as articles have.</p></article>`
	pageURL, _ := url.Parse("https://news.example/2026/story")
	for _, tc := range []struct{ name, head, want string }{
		{"og:image", `<meta property="og:image" content="https://cdn.example/a.jpg"><meta name="twitter:image" content="https://cdn.example/t.jpg">`, "https://cdn.example/a.jpg"},
		{"relative og:image", `<meta property="og:image" content="/img/a.png">`, "https://news.example/img/a.png"},
		{"twitter:image only", `<meta name="twitter:image" content="https://cdn.example/t.jpg">`, "https://cdn.example/t.jpg"},
		{"bad og:image, then a good one", `<meta property="og:image" content="javascript:x"><meta property="og:image:secure_url" content="https://cdn.example/s.jpg">`, "https://cdn.example/s.jpg"},
		{"none", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page := "<html><head><title>Title</title>" + tc.head + "</head><body>" + article + "</body></html>"
			a, err := extract.Extract([]byte(page), "text/html; charset=utf-8", pageURL)
			if err != nil {
				t.Fatal(err)
			}
			if a.Image != tc.want {
				t.Errorf("image %q, want %q", a.Image, tc.want)
			}
			if strings.Contains(a.Body, "cdn.example") {
				t.Errorf("body holds the image: %s", a.Body)
			}
		})
	}
}
