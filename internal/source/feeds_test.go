package source_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
	"golang.org/x/text/encoding/charmap"
)

// audioView is what a feed item's audio shows of the feed.
type audioView struct {
	Title, Body, ArticleURL, Language string
}

// latin1 returns s in ISO-8859-1.
func latin1(t *testing.T, s string) []byte {
	t.Helper()
	b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPollRealFeeds reads feeds written as real publishers write them, each
// served from a loopback server as its publisher serves it, and checks the
// audios of their items and the note on the feed.
func TestPollRealFeeds(t *testing.T) {
	t.Parallel()
	// {srv} in a document or a want stands for the server's URL.
	for _, tc := range []struct {
		name        string
		contentType string
		body        func(t *testing.T) []byte
		status      string
		lastError   string // words of the note; "" for none
		want        map[string]audioView
	}{
		{
			// Item 15: the charset is only in the Content-Type.
			name:        "Latin-1 RSS, charset only in the header",
			contentType: "application/rss+xml; charset=ISO-8859-1",
			body: func(t *testing.T) []byte {
				return latin1(t, `<rss version="2.0"><channel><title>Blog</title><link>https://example.org/</link>
<item><guid>cafe</guid><title>Café crème</title><link>https://example.org/cafe</link><description>À la française, déjà.</description></item>
</channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want:   map[string]audioView{"cafe": {Title: "Café crème", Body: "À la française, déjà.", ArticleURL: "https://example.org/cafe"}},
		},
		{
			name:        "UTF-8 RSS served with a wrong charset",
			contentType: "application/rss+xml; charset=ISO-8859-1",
			body: func(t *testing.T) []byte {
				return []byte(`<rss version="2.0"><channel><title>Blog</title><item><guid>a</guid><title>Grüße</title><description>Schöne Grüße.</description></item></channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want:   map[string]audioView{"a": {Title: "Grüße", Body: "Schöne Grüße."}},
		},
		{
			name:        "Latin-1 RSS that declares its encoding, served as UTF-8",
			contentType: "application/rss+xml; charset=utf-8",
			body: func(t *testing.T) []byte {
				return latin1(t, `<?xml version="1.0" encoding="ISO-8859-1"?><rss version="2.0"><channel><title>Blog</title><item><guid>a</guid><title>Noël</title><description>Joyeux Noël.</description></item></channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want:   map[string]audioView{"a": {Title: "Noël", Body: "Joyeux Noël."}},
		},
		{
			// Item 16: a plain-text summary escaped twice.
			name:        "entity-escaped plain-text summary",
			contentType: "application/rss+xml",
			body: func(t *testing.T) []byte {
				return []byte(`<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Podcast</title>
<item><guid isPermaLink="false">ep-1</guid><title>Tom&amp;apos;s &amp;amp; Jerry&amp;rsquo;s</title><description>There&amp;rsquo;s tons of news &amp;mdash; and more.</description></item>
<item><guid isPermaLink="false">ep-2</guid><title>HTML</title><description>&lt;p&gt;Fish &amp;amp; chips&lt;/p&gt;</description></item>
</channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want: map[string]audioView{
				"ep-1": {Title: "Tom's & Jerry’s", Body: "There’s tons of news — and more."},
				// Markup is HTML, whose entities the HTML reader decodes.
				"ep-2": {Title: "HTML", Body: "<p>Fish &amp; chips</p>"},
			},
		},
		{
			// Item 17: relative links.
			name:        "Atom with relative links",
			contentType: "application/atom+xml",
			body: func(t *testing.T) []byte {
				return []byte(`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>QEMU</title><id>https://www.qemu.org/</id><updated>2025-08-26T00:00:00Z</updated>
<entry><id>https://www.qemu.org/2025/08/26/qemu-10-1-0</id><title>QEMU version 10.1.0 released</title><link href="/2025/08/26/qemu-10-1-0/"/><updated>2025-08-26T00:00:00Z</updated><summary>We'd like to announce the availability of the QEMU 10.1.0 release.</summary></entry>
<entry xml:base="https://blog.example.net/news/"><id>tag:blog.example.net,2025:b</id><title>Based</title><link href="b.html"/><updated>2025-08-25T00:00:00Z</updated><summary>Based.</summary></entry>
</feed>`)
			},
			status: narrator.SourceStatusOK,
			want: map[string]audioView{
				"https://www.qemu.org/2025/08/26/qemu-10-1-0": {Title: "QEMU version 10.1.0 released", Body: "We'd like to announce the availability of the QEMU 10.1.0 release.",
					ArticleURL: "{srv}/2025/08/26/qemu-10-1-0/"},
				"tag:blog.example.net,2025:b": {Title: "Based", Body: "Based.", ArticleURL: "https://blog.example.net/news/b.html"},
			},
		},
		{
			// Item 19: an untitled item has no spoken title.
			name:        "untitled item",
			contentType: "application/rss+xml",
			body: func(t *testing.T) []byte {
				return []byte(`<rss version="2.0"><channel><title>Scripting News</title><link>http://scripting.com/</link>
<item><description>A post without a title.</description><link>http://scripting.com/2017/05/09/a.html</link><guid>http://scripting.com/2017/05/09/a.html</guid></item>
</channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want:   map[string]audioView{"http://scripting.com/2017/05/09/a.html": {Body: "A post without a title.", ArticleURL: "http://scripting.com/2017/05/09/a.html"}},
		},
		{
			// Item 20: JSON that is not a feed.
			name:        "JSON that is not a feed",
			contentType: "application/json",
			body: func(t *testing.T) []byte {
				return []byte(`{"status":"ok","users":[{"id":1,"name":"Ann"}]}`)
			},
			status:    narrator.SourceStatusError,
			lastError: "not a JSON Feed",
		},
		{
			name:        "JSON Feed of version 3",
			contentType: "application/feed+json",
			body: func(t *testing.T) []byte {
				return []byte(`{"version":3,"title":"T","items":[{"id":"a","content_text":"A."}]}`)
			},
			status:    narrator.SourceStatusError,
			lastError: "not a JSON Feed",
		},
		{
			name:        "JSON Feed whose items are no list",
			contentType: "application/feed+json",
			body: func(t *testing.T) []byte {
				return []byte(`{"version":"https://jsonfeed.org/version/1.1","title":"T","items":{"id":"a"}}`)
			},
			status:    narrator.SourceStatusError,
			lastError: `the JSON Feed is not valid: its "items" is an object, not a list`,
		},
		{
			name:        "JSON Feed whose title is a number",
			contentType: "application/feed+json",
			body: func(t *testing.T) []byte {
				return []byte(`{"version":"https://jsonfeed.org/version/1.1","title":"T","items":[{"id":"a","title":7,"content_text":"A."}]}`)
			},
			status:    narrator.SourceStatusError,
			lastError: `the JSON Feed is not valid: its "items.title" is a number`,
		},
		{
			// Item 21: the item's language, then the feed's.
			name:        "Atom with xml:lang",
			contentType: "application/atom+xml",
			body: func(t *testing.T) []byte {
				return []byte(`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr-CA"><title>Nouvelles</title><id>urn:n</id><updated>2025-08-26T00:00:00Z</updated>
<entry><id>urn:n:1</id><title>Bonjour</title><updated>2025-08-26T00:00:00Z</updated><content type="html">&lt;p&gt;Salut.&lt;/p&gt;</content></entry>
<entry xml:lang="de"><id>urn:n:2</id><title>Hallo</title><updated>2025-08-25T00:00:00Z</updated><content type="text">Guten Tag.</content></entry>
</feed>`)
			},
			status: narrator.SourceStatusOK,
			want: map[string]audioView{
				"urn:n:1": {Title: "Bonjour", Body: "<p>Salut.</p>", Language: "fr-CA"},
				"urn:n:2": {Title: "Hallo", Body: "Guten Tag.", Language: "de"},
			},
		},
		{
			name:        "RSS with a channel language and an item's dc:language",
			contentType: "application/rss+xml",
			body: func(t *testing.T) []byte {
				return []byte(`<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>News</title><language>en-gb</language>
<item><guid>1</guid><title>Colour</title><description>Grey.</description></item>
<item><guid>2</guid><title>Cymraeg</title><description>Bore da.</description><dc:language>cy</dc:language></item>
<item><guid>3</guid><title>Junk</title><description>Lang.</description><dc:language>!!</dc:language></item>
</channel></rss>`)
			},
			status: narrator.SourceStatusOK,
			want: map[string]audioView{
				"1": {Title: "Colour", Body: "Grey.", Language: "en-gb"},
				"2": {Title: "Cymraeg", Body: "Bore da.", Language: "cy"},
				"3": {Title: "Junk", Body: "Lang.", Language: "en-gb"},
			},
		},
		{
			name:        "JSON Feed 1.1 with languages",
			contentType: "application/feed+json",
			body: func(t *testing.T) []byte {
				return []byte(`{"version":"https://jsonfeed.org/version/1.1","title":"T","language":"nl","items":[
{"id":"a","url":"/a","title":"A","content_text":"Hoi.","date_published":"2026-05-01T09:00:00Z"},
{"id":"b","title":"B","content_text":"Goeie.","language":"fy","date_published":"2026-04-01T09:00:00Z"}]}`)
			},
			status: narrator.SourceStatusOK,
			want: map[string]audioView{
				"a": {Title: "A", Body: "Hoi.", ArticleURL: "{srv}/a", Language: "nl"},
				"b": {Title: "B", Body: "Goeie.", Language: "fy"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, fetch.Options{AllowPrivate: true})
			body := tc.body(t)
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write(body)
			}))
			src := b.mustSource(t, srv.URL+"/feed", nil)
			got := b.mustPoll(t, src.ID)
			if got.State.Status != tc.status || (tc.lastError == "") != (got.State.LastError == "") || !strings.Contains(got.State.LastError, tc.lastError) {
				t.Errorf("state %q %q; want %q with %q", got.State.Status, got.State.LastError, tc.status, tc.lastError)
			}
			want := map[string]audioView{}
			for key, v := range tc.want {
				v.ArticleURL = strings.ReplaceAll(v.ArticleURL, "{srv}", srv.URL)
				want[narrator.ItemExternalID(src.ID, key)] = v
			}
			views := map[string]audioView{}
			for id, a := range b.audios(t) {
				views[id] = audioView{Title: a.Title, Body: a.Body, ArticleURL: a.ArticleURL, Language: a.Metadata[narrator.MetadataLanguage]}
			}
			if diff := cmp.Diff(want, views); diff != "" {
				t.Errorf("audios (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPollFailedReadKeepsNoValidators: validators are kept only from a
// read that read the whole feed, so that a feed in error stays in error,
// its failures counting and its reads backing off, and items that wait for
// the next read are read then, not answered 304 (item 18).
func TestPollFailedReadKeepsNoValidators(t *testing.T) {
	t.Parallel()
	t.Run("invalid feed with an ETag", func(t *testing.T) {
		t.Parallel()
		b := setup(t, fetch.Options{AllowPrivate: true})
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"broken"`)
			w.Header().Set("Last-Modified", "Tue, 26 Aug 2025 10:00:00 GMT")
			if r.Header.Get("If-None-Match") == `"broken"` || r.Header.Get("If-Modified-Since") != "" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", "application/rss+xml")
			fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><item><title>Broken</ti`)
		}))
		src := b.mustSource(t, srv.URL, nil)
		for i := 1; i <= 3; i++ {
			got := b.mustPoll(t, src.ID)
			if got.State.Status != narrator.SourceStatusError || !strings.Contains(got.State.LastError, "could not be parsed") || got.State.Failures != i {
				t.Fatalf("read %d: state %q %q, %d failures; want the parse error, %d failures", i, got.State.Status, got.State.LastError, got.State.Failures, i)
			}
			if want := got.State.LastFetchAt.Add(got.Interval << i); got.State.NextPollAt.Before(want) {
				t.Errorf("read %d: next poll %v; want a backoff to %v", i, got.State.NextPollAt, want)
			}
			if got.State.ETag != "" || got.State.LastModified != "" {
				t.Errorf("read %d: validators %q %q kept from a failed read", i, got.State.ETag, got.State.LastModified)
			}
		}
	})
	t.Run("items that wait for the next read", func(t *testing.T) {
		t.Parallel()
		b := setup(t, fetch.Options{AllowPrivate: true})
		pub := &publisher{}
		srv := serve(t, pub)
		var all []rssItem
		for i := range narrator.MaxItemsPerPoll + 2 {
			all = append(all, item(fmt.Sprint("i", i), "Text.", time.Duration(i)*time.Hour))
		}
		pub.set(all...)
		src := b.mustSource(t, srv.URL, func(s *narrator.Source) { s.BackfillItems = narrator.MaxItemsPerSource })
		got := b.mustPoll(t, src.ID)
		if got.State.Created != narrator.MaxItemsPerPoll || !strings.Contains(got.State.LastError, "2 more items wait for the next read") {
			t.Fatalf("first read: state %+v; want %d created and 2 waiting", got.State, narrator.MaxItemsPerPoll)
		}
		got = b.mustPoll(t, src.ID)
		if got.State.Status != narrator.SourceStatusOK || got.State.Created != narrator.MaxItemsPerPoll+2 || got.State.LastError != "" {
			t.Fatalf("second read: state %q %q, %d created; want ok and the 2 waiting items created", got.State.Status, got.State.LastError, got.State.Created)
		}
		if got = b.mustPoll(t, src.ID); got.State.Status != narrator.SourceStatusNotModified {
			t.Errorf("third read: status %q; want not_modified, as the whole feed was read", got.State.Status)
		}
	})
}

// TestPollBackfillNotes: items that the first read's backfill leaves out
// are not counted as not narrated, on that read or later ones; items
// within it are (item 19).
func TestPollBackfillNotes(t *testing.T) {
	t.Parallel()
	b := setup(t, fetch.Options{AllowPrivate: true})
	var doc strings.Builder
	write := func(guids ...string) {
		doc.Reset()
		doc.WriteString(`<rss version="2.0"><channel><title>Episodes</title>`)
		for i, g := range guids {
			desc := "<description>Notes.</description>"
			if strings.HasPrefix(g, "empty") {
				desc = "" // an old episode with no show notes
			}
			fmt.Fprintf(&doc, `<item><guid>%s</guid><title>%s</title>%s<pubDate>%s</pubDate></item>`, g, g, desc, testStart.Add(-time.Duration(i)*24*time.Hour).Format(time.RFC1123Z))
		}
		doc.WriteString(`</channel></rss>`)
	}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, doc.String())
	}))
	src := b.mustSource(t, srv.URL, func(s *narrator.Source) { s.BackfillItems = 3 })

	write("e5", "e4", "e3", "empty2", "empty1")
	if got := b.mustPoll(t, src.ID); got.State.Created != 3 || got.State.LastError != "" {
		t.Fatalf("first read: %d created, note %q; want 3 and none", got.State.Created, got.State.LastError)
	}
	write("e6", "e5", "e4", "e3", "empty2", "empty1")
	if got := b.mustPoll(t, src.ID); got.State.Created != 4 || got.State.LastError != "" {
		t.Fatalf("second read: %d created, note %q; want 4 and none", got.State.Created, got.State.LastError)
	}
	write("empty7", "e6", "e5", "e4", "e3", "empty2", "empty1")
	if got := b.mustPoll(t, src.ID); got.State.Created != 4 || !strings.HasPrefix(got.State.LastError, `1 item was not narrated; the first because item "empty7" has no text`) {
		t.Fatalf("third read: %d created, note %q; want 4 and the new empty item noted", got.State.Created, got.State.LastError)
	}
}
