package feedsource_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feedsource"
)

func TestParse(t *testing.T) {
	t.Parallel()
	published := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, body string
		want       narrator.FeedItem
	}{
		{"RSS 0.91", `<rss version="0.91"><channel><title>T</title><item><title>A</title><link>https://example.com/a</link><description>Sum.</description></item></channel></rss>`,
			narrator.FeedItem{Title: "A", Link: "https://example.com/a", Summary: "Sum."}},
		{"RSS 1.0", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://example.com/"><title>T</title></channel>
<item rdf:about="https://example.com/a"><title>A</title><link>https://example.com/a</link><description>Sum.</description><dc:creator>Ann</dc:creator><dc:date>2026-05-01T09:00:00Z</dc:date></item></rdf:RDF>`,
			narrator.FeedItem{Title: "A", Link: "https://example.com/a", Summary: "Sum.", Author: "Ann", Published: published, Updated: published}},
		{"RSS 2.0 with content:encoded", `<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><item><guid isPermaLink="false">urn:a</guid><title>A</title><description>Sum.</description><content:encoded><![CDATA[<p>Full.</p>]]></content:encoded><category>News</category><category>World</category><pubDate>Fri, 01 May 2026 09:00:00 GMT</pubDate></item></channel></rss>`,
			narrator.FeedItem{GUID: "urn:a", Title: "A", Summary: "Sum.", Content: "<p>Full.</p>", Categories: []string{"News", "World"}, Published: published}},
		{"Atom", `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>tag:example.com,2026:a</id><title>A</title><link href="https://example.com/a"/><summary>Sum.</summary><content type="html">&lt;p&gt;Full.&lt;/p&gt;</content><author><name>Ann</name></author><category term="News"/><published>2026-05-01T09:00:00Z</published><updated>2026-05-02T09:00:00Z</updated></entry></feed>`,
			narrator.FeedItem{GUID: "tag:example.com,2026:a", Title: "A", Link: "https://example.com/a", Summary: "Sum.", Content: "<p>Full.</p>", Author: "Ann", Categories: []string{"News"}, Published: published, Updated: published.Add(24 * time.Hour)}},
		{"JSON Feed 1.1", `{"version":"https://jsonfeed.org/version/1.1","title":"T","items":[{"id":"a","url":"https://example.com/a","title":"A","content_html":"<p>Full.</p>","summary":"Sum.","authors":[{"name":"Ann"}],"tags":["News"],"date_published":"2026-05-01T09:00:00Z"}]}`,
			narrator.FeedItem{GUID: "a", Title: "A", Link: "https://example.com/a", Summary: "Sum.", Content: "<p>Full.</p>", Author: "Ann", Categories: []string{"News"}, Published: published}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := feedsource.Parse([]byte(tc.body))
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
		if _, err := feedsource.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}
