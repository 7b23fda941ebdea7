package source_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/source"
)

func TestParse(t *testing.T) {
	t.Parallel()
	published := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, body string
		want       narrator.SourceItem
	}{
		{"RSS 0.91", `<rss version="0.91"><channel><title>T</title><item><title>A</title><link>https://example.com/a</link><description>Sum.</description></item></channel></rss>`,
			narrator.SourceItem{Title: "A", Link: "https://example.com/a", Summary: "Sum."}},
		{"RSS 1.0", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://example.com/"><title>T</title></channel>
<item rdf:about="https://example.com/a"><title>A</title><link>https://example.com/a</link><description>Sum.</description><dc:creator>Ann</dc:creator><dc:date>2026-05-01T09:00:00Z</dc:date></item></rdf:RDF>`,
			narrator.SourceItem{Title: "A", Link: "https://example.com/a", Summary: "Sum.", Author: "Ann", Published: published, Updated: published}},
		{"RSS 2.0 with content:encoded", `<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><item><guid isPermaLink="false">urn:a</guid><title>A</title><description>Sum.</description><content:encoded><![CDATA[<p>Full.</p>]]></content:encoded><category>News</category><category>World</category><pubDate>Fri, 01 May 2026 09:00:00 GMT</pubDate></item></channel></rss>`,
			narrator.SourceItem{GUID: "urn:a", Title: "A", Summary: "Sum.", Content: "<p>Full.</p>", Categories: []string{"News", "World"}, Published: published}},
		{"Atom", `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>tag:example.com,2026:a</id><title>A</title><link href="https://example.com/a"/><summary>Sum.</summary><content type="html">&lt;p&gt;Full.&lt;/p&gt;</content><author><name>Ann</name></author><category term="News"/><published>2026-05-01T09:00:00Z</published><updated>2026-05-02T09:00:00Z</updated></entry></feed>`,
			narrator.SourceItem{GUID: "tag:example.com,2026:a", Title: "A", Link: "https://example.com/a", Summary: "Sum.", Content: "<p>Full.</p>", Author: "Ann", Categories: []string{"News"}, Published: published, Updated: published.Add(24 * time.Hour)}},
		{"JSON Feed 1.1", `{"version":"https://jsonfeed.org/version/1.1","title":"T","items":[{"id":"a","url":"https://example.com/a","title":"A","content_html":"<p>Full.</p>","summary":"Sum.","authors":[{"name":"Ann"}],"tags":["News"],"date_published":"2026-05-01T09:00:00Z"}]}`,
			narrator.SourceItem{GUID: "a", Title: "A", Link: "https://example.com/a", Summary: "Sum.", Content: "<p>Full.</p>", Author: "Ann", Categories: []string{"News"}, Published: published}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := source.Parse(source.Document{Body: []byte(tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Items) != 1 {
				t.Fatalf("%d items; want 1", len(f.Items))
			}
			if diff := cmp.Diff(&tc.want, f.Items[0]); diff != "" {
				t.Errorf("item (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"", "hello", "<html><body>page</body></html>", "<rss><channel><item>"} {
		if _, err := source.Parse(source.Document{Body: []byte(bad)}); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

// TestParseDocument: what Parse makes of a document as served, with its
// charset and its URL.
func TestParseDocument(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  source.Document
		want []*narrator.SourceItem
		err  string // words of the error; "" for none
	}{
		{"Latin-1, charset in the header", source.Document{Body: []byte("<rss version=\"2.0\"><channel><item><guid>a</guid><title>Caf\xe9</title></item></channel></rss>"), Charset: "ISO-8859-1"},
			[]*narrator.SourceItem{{GUID: "a", Title: "Café"}}, ""},
		{"windows-1252 declared, header says UTF-8", source.Document{Body: []byte("<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss version=\"2.0\"><channel><item><guid>a</guid><title>\x93Hi\x94</title></item></channel></rss>"), Charset: "utf-8"},
			[]*narrator.SourceItem{{GUID: "a", Title: "“Hi”"}}, ""},
		{"UTF-8 with a wrong charset", source.Document{Body: []byte(`<rss version="2.0"><channel><item><guid>a</guid><title>Café</title></item></channel></rss>`), Charset: "ISO-8859-1"},
			[]*narrator.SourceItem{{GUID: "a", Title: "Café"}}, ""},
		{"double-escaped text", source.Document{Body: []byte(`<rss version="2.0"><channel><item><guid>a</guid><title>Q&amp;amp;A</title><description>There&amp;rsquo;s tons</description><author>a@example.com (Ren&amp;eacute;)</author></item></channel></rss>`)},
			[]*narrator.SourceItem{{GUID: "a", Title: "Q&A", Summary: "There’s tons", Author: "René"}}, ""},
		{"relative link, redirected feed", source.Document{Body: []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>e</id><link href="../2025/a/"/></entry></feed>`), URL: "https://www.example.org/blog/feed/atom.xml"},
			[]*narrator.SourceItem{{GUID: "e", Link: "https://www.example.org/blog/2025/a/"}}, ""},
		{"scheme-relative link", source.Document{Body: []byte(`<rss version="2.0"><channel><item><guid>a</guid><link>//cdn.example.org/a</link></item></channel></rss>`), URL: "https://example.org/feed"},
			[]*narrator.SourceItem{{GUID: "a", Link: "https://cdn.example.org/a"}}, ""},
		{"RSS 1.0 item languages", source.Document{Body: []byte(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xml:lang="it">
<channel rdf:about="https://example.com/"><title>T</title></channel>
<item rdf:about="https://example.com/a" xml:lang="es"><title>A</title><link>https://example.com/a</link></item>
<item rdf:about="https://example.com/b"><title>B</title><link>https://example.com/b</link></item></rdf:RDF>`)},
			[]*narrator.SourceItem{{Title: "A", Link: "https://example.com/a", Language: "es"}, {Title: "B", Link: "https://example.com/b", Language: "it"}}, ""},
		{"JSON that is no feed", source.Document{Body: []byte(`{"status":"ok","users":[]}`)}, nil, "not a JSON Feed"},
		{"JSON Feed of version 3", source.Document{Body: []byte(`{"version":3,"items":[]}`)}, nil, "not a JSON Feed"},
		{"JSON Feed of another site", source.Document{Body: []byte(`{"version":"https://example.com/version/1","items":[]}`)}, nil, "not a JSON Feed"},
		{"JSON Feed with an item that is a string", source.Document{Body: []byte(`{"version":"https://jsonfeed.org/version/1","items":["a"]}`)}, nil, "an item is a string, not an object"},
		{"broken JSON", source.Document{Body: []byte(`{"version":"https://jsonfeed.org/version/1",`)}, nil, "not valid JSON"},
		{"empty JSON Feed 1.0", source.Document{Body: []byte(`{"version":"https://jsonfeed.org/version/1","title":"T","items":[]}`)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := source.Parse(tc.doc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse: %v; want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}
