package extract_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/extract"
)

// story is enough prose for a finder to take it for an article.
var story = strings.Repeat("<p>The council met on Tuesday to talk about the harbour, the roads, and the new library, which opens in spring after two years of work.</p>\n", 6)

// TestCanonicalSite: a canonical URL is believed only on the page's own
// site, its registrable domain, or its host where it has none.
func TestCanonicalSite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		page, canonical string
		believed        bool
	}{
		{"https://www.example.co.uk/a", "https://example.co.uk/b", true},
		{"https://news.example.co.uk/a", "http://www.example.co.uk/b", true},
		{"https://Example.COM./a", "https://amp.example.com/b", true},
		{"https://example.co.uk/a", "https://other.co.uk/b", false},
		{"https://alice.github.io/a", "https://bob.github.io/b", false},
		{"https://mirror.example.net/a", "https://example.com/b", false},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b", true},
		{"http://127.0.0.1:8080/a", "http://0.0.1/b", false},
		{"http://10.0.0.1/a", "http://192.168.0.1/b", false},
		{"http://localhost/a", "http://localhost/b", true},
		{"http://localhost/a", "http://other/b", false},
	} {
		base, _ := url.Parse(tc.page)
		page := `<html><head><title>T</title><link rel="canonical" href="` + tc.canonical + `"></head><body><article>` + story + `</article></body></html>`
		a, err := extract.Extract([]byte(page), "text/html", base)
		if err != nil {
			t.Fatal(err)
		}
		want := base.String()
		if tc.believed {
			want = tc.canonical
		}
		if a.URL != want {
			t.Errorf("a page at %s naming %s: URL %s, want %s", tc.page, tc.canonical, a.URL, want)
		}
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://site.example/news/a?x=1")
	for _, tc := range []struct {
		name, page, contentType string
		want                    extract.Article
	}{
		{
			name: "relative canonical, language, meta author",
			page: `<html lang="de-AT"><head><title>Der Hafen</title><link rel="canonical" href="/news/hafen"><meta name="author" content="Eva Berg"></head><body><article><h1>Der Hafen</h1>` + story + `</article></body></html>`,
			want: extract.Article{Title: "Der Hafen", Author: "Eva Berg", URL: "https://site.example/news/hafen", Language: "de-AT"},
		},
		{
			name: "a canonical that is not http is ignored, language from metadata",
			page: `<html><head><title>T</title><link rel="canonical" href="javascript:alert(1)"><meta http-equiv="Content-Language" content="fr-CA, en"></head><body><article>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", URL: "https://site.example/news/a?x=1", Language: "fr-CA"},
		},
		{
			name: "an absolute canonical on the page's own site",
			page: `<html><head><title>T</title><link rel="canonical" href="https://www.site.example/news/a"></head><body><article>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", URL: "https://www.site.example/news/a"},
		},
		{
			name: "a canonical on another site is not believed",
			page: `<html><head><title>T</title><link rel="canonical" href="https://publisher.example/news/a"></head><body><article>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", URL: "https://site.example/news/a?x=1"},
		},
		{
			name: "a canonical on a site that only ends like the page's",
			page: `<html><head><title>T</title><link rel="canonical" href="https://evilsite.example/news/a"></head><body><article>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", URL: "https://site.example/news/a?x=1"},
		},
		{
			name:        "charset from the header",
			page:        "<html><head><title>Caf\xe9</title></head><body><article>" + story + "</article></body></html>",
			contentType: "text/html; charset=iso-8859-1",
			want:        extract.Article{Title: "Café", URL: "https://site.example/news/a?x=1"},
		},
		{
			name: "undeclared UTF-8 past the first kilobyte",
			page: "<html><head><title>Straße</title></head><body><article>" + story + "</article></body></html>",
			want: extract.Article{Title: "Straße", URL: "https://site.example/news/a?x=1"},
		},
		{
			name:        "a Latin page as its meta says",
			page:        "<html><head><meta charset=\"iso-8859-1\"><title>Stra\xdfe</title></head><body><article>" + story + "</article></body></html>",
			contentType: "text/html",
			want:        extract.Article{Title: "Straße", URL: "https://site.example/news/a?x=1"},
		},
		{
			name: "a language that is not a tag is left out",
			page: `<html lang="english please &lt;script&gt;"><head><title>T</title></head><body><article>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", URL: "https://site.example/news/a?x=1"},
		},
		{
			name: "the author metadata wins over a byline with a handle",
			page: `<html><head><title>T</title><meta name="author" content="Erin Cunningham"></head><body><article><p class="byline">Follow @erin</p>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", Author: "Erin Cunningham", URL: "https://site.example/news/a?x=1"},
		},
		{
			name: "byline in the page",
			page: `<html><head><title>T</title></head><body><article><p class="byline">By Sam Lee</p>` + story + `</article></body></html>`,
			want: extract.Article{Title: "T", Author: "Sam Lee", URL: "https://site.example/news/a?x=1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := extract.Extract([]byte(tc.page), tc.contentType, base)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(a.Body, "<p>The council met on Tuesday") || strings.Contains(a.Body, "By Sam Lee") {
				t.Errorf("body = %q", a.Body)
			}
			a.Body = ""
			if diff := cmp.Diff(tc.want, *a); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractKeepsStructureOnly(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>Title here</title></head><body><article>
<h1>Title here</h1>
<p>First <b>bold</b> and <a href="/x">linked</a> words, long enough to be an article paragraph of some sort.</p>
<figure><img src="a.jpg"><figcaption>A caption nobody should hear.</figcaption></figure>
<h2>A section</h2>
<ol><li>One item</li><li>Two items</li></ol>
<blockquote><p>A quote, with &lt;angle&gt; brackets.</p></blockquote>
<p>Advertisement</p>
<p>Feb. 21, 2019 7:11 AM PST</p>
<p>[What you need to know to start the day: get our newsletter.]</p>
<p>SIGN UP FOR OUR NEWSLETTER</p>
<section id="sharing-mutable-history"><p>A section whose anchor was made from its heading, and which is kept.</p></section>
<div class="share-bar">Share on Facebook</div>
<h2>Related coverage</h2>
<ul><li><a href="/o">Other story link</a></li><li><a href="/p">Another story link</a></li></ul>
<p>Photo: Jane Doe</p>
<p>Sign up for our daily briefing, in your inbox every morning.</p>
<p>© 2024 The Site. All rights reserved.</p>
<div class="item no_caption"><p>A paragraph in an element whose classes say what it has, not what it is.</p></div>
` + story + `</article></body></html>`
	a, err := extract.Extract([]byte(page), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "<p>First bold and linked words, long enough to be an article paragraph of some sort.</p>\n" +
		"<h2>A section</h2>\n<ol>\n<li>One item</li>\n<li>Two items</li>\n</ol>\n" +
		"<blockquote><p>A quote, with &lt;angle&gt; brackets.</p></blockquote>\n" +
		"<p>A section whose anchor was made from its heading, and which is kept.</p>\n" +
		"<p>A paragraph in an element whose classes say what it has, not what it is.</p>\n"
	if !strings.HasPrefix(a.Body, want) {
		t.Errorf("body starts %q\nwant %q", a.Body[:min(len(a.Body), len(want))], want)
	}
	for _, bad := range []string{"caption", "Advertisement", "Share", "Title here", "<img", "href", "2019", "newsletter", "NEWSLETTER", "Related coverage", "story link", "Jane Doe", "briefing", "rights reserved"} {
		if strings.Contains(a.Body, bad) {
			t.Errorf("body holds %q", bad)
		}
	}
}

func TestExtractEmptyPage(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"", "<html><body><nav><a href=/>Home</a></nav></body></html>", "%PDF-1.7 binary"} {
		if _, err := extract.Extract([]byte(page), "text/html", nil); !errors.Is(err, extract.ErrNoArticle) {
			t.Errorf("Extract(%q) = %v, want ErrNoArticle", page, err)
		}
	}
}
