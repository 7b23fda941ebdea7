package feed_test

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mmcdole/gofeed"
	"github.com/mmcdole/gofeed/extensions"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
	"github.com/narrator/narrator/internal/standin"
	"github.com/narrator/narrator/internal/storetest"
)

const (
	mediaBase  = "https://cdn.example/media/"
	publicBase = "https://audio.example"
)

type testBundle struct {
	store   *sqlite.Store
	clock   *storetest.Clock
	srv     *httptest.Server
	project *narrator.Project
	feed    *narrator.Feed
}

// setup returns a real SQLite store with a project whose feed is on, and
// the feed handler on a real HTTP server.
func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := t.Context()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	b := &testBundle{store: st, clock: storetest.NewClock(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))}
	st.Now = b.clock.Now
	acc := &narrator.Account{Name: "Acme"}
	if err := st.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	title, body, _ := narrator.DefaultVoices("en_US")
	b.project = &narrator.Project{AccountID: acc.ID, Title: "Acme Daily", Type: narrator.ProjectTypeAPI, Language: "en_US",
		URL: "https://acme.example/", TitleVoice: title.Name, BodyVoice: body.Name}
	if err := st.CreateProject(ctx, b.project); err != nil {
		t.Fatal(err)
	}
	b.feed = narrator.NewFeedSettings(b.project)
	b.feed.Description, b.feed.Author = "The day's articles, read aloud.", "Acme Newsroom"
	b.feed.ImageURL, b.feed.Category = "https://acme.example/cover.png", "News > Daily News"
	b.feed.OwnerName, b.feed.OwnerEmail = "Acme Audio", "podcasts@acme.example"
	b.feed.Token = mustToken(t)
	if err := st.SaveFeed(ctx, b.feed); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/feeds/{name}", feed.New(feed.Config{
		Store:     st,
		MediaURL:  func(key string) string { return mediaBase + key },
		PublicURL: publicBase,
	}))
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

func mustToken(t *testing.T) string {
	t.Helper()
	tok, err := narrator.NewFeedToken()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (b *testBundle) url() string { return b.srv.URL + narrator.FeedPath(b.feed.Token) }

// finish creates an audio and finishes a rendering of it made of keys
// under tag, with sizes that differ per audio.
func (b *testBundle) finish(t *testing.T, a *narrator.Audio) *narrator.Audio {
	t.Helper()
	a.ProjectID = b.project.ID
	if a.Body == "" {
		a.Body = "<p>Some text.</p>"
	}
	if _, err := b.store.CreateAudio(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	tag := "tok" + strconv.FormatInt(a.ID, 10)
	r := narrator.Rendering{
		Keys:     map[string]string{narrator.ContentTypeMP3: tag + "/audio.mp3", narrator.ContentTypeM3U8: tag + "/audio.m3u8"},
		Bytes:    map[string]int64{narrator.ContentTypeMP3: 10_000 + a.ID, narrator.ContentTypeM3U8: 100},
		Duration: 61_400 * time.Millisecond,
	}
	b.finishRendering(t, a, r)
	return a
}

func (b *testBundle) finishRendering(t *testing.T, a *narrator.Audio, r narrator.Rendering) {
	t.Helper()
	if err := b.store.FinishAudio(t.Context(), a.ID, a.Revision, r); err != nil {
		t.Fatal(err)
	}
}

// get fetches url with the given request headers.
func get(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// mustParse checks that body is well-formed XML, strictly, and parses it
// with gofeed, a podcast-aware feed parser independent of this project.
func mustParse(t *testing.T, body []byte) *gofeed.Feed {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, body)
		}
	}
	f, err := gofeed.NewParser().ParseString(string(body))
	if err != nil {
		t.Fatalf("gofeed: %v\n%s", err, body)
	}
	if f.FeedType != "rss" || f.FeedVersion != "2.0" {
		t.Errorf("feed type %s %s, want rss 2.0", f.FeedType, f.FeedVersion)
	}
	return f
}

// extValue returns the text of the first podcast: element name among the
// extensions of a channel or item, "" if it has none.
func extValue(ext map[string]map[string][]ext.Extension, name string) string {
	if es := ext["podcast"][name]; len(es) > 0 {
		return es[0].Value
	}
	return ""
}

// mustFeed fetches and parses the feed.
func (b *testBundle) mustFeed(t *testing.T) *gofeed.Feed {
	t.Helper()
	resp, body := get(t, b.url(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET feed: %s %s", resp.Status, body)
	}
	return mustParse(t, body)
}

func TestFeed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.finish(t, &narrator.Audio{Title: "First", Author: "Ann", ArticleURL: "https://acme.example/first",
		Body: "<p>The first paragraph &amp; more.</p><p>A second one.</p>",
		Metadata: map[string]string{narrator.MetadataPublished: "2026-04-01T10:00:00+02:00", narrator.MetadataLanguage: "en_GB",
			narrator.MetadataImage: "https://acme.example/first.jpg?w=1400&h=1400"}})
	b.clock.Advance(time.Hour)
	second := b.finish(t, &narrator.Audio{Title: "Second", Body: "Plain text only."})
	b.clock.Advance(time.Hour)
	waiting := &narrator.Audio{ProjectID: b.project.ID, Title: "Not yet", Body: "Waiting."}
	if _, err := b.store.CreateAudio(t.Context(), waiting); err != nil {
		t.Fatal(err)
	}

	resp, body := get(t, b.url(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	for k, want := range map[string]string{
		"Content-Type":  "application/rss+xml; charset=utf-8",
		"Cache-Control": feed.CacheControl,
		"Last-Modified": b.clock.Now().Format(http.TimeFormat), // the unprocessed audio's creation
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if etag := resp.Header.Get("ETag"); !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q is not a strong validator", etag)
	}
	for _, ns := range []string{`xmlns:itunes="` + feed.NamespaceITunes + `"`, `xmlns:podcast="` + feed.NamespacePodcast + `"`,
		`xmlns:content="` + feed.NamespaceContent + `"`} {
		if !strings.Contains(string(body), ns) {
			t.Errorf("feed lacks %s", ns)
		}
	}
	f := mustParse(t, body)

	// The channel.
	got := map[string]string{
		"title": f.Title, "description": html.UnescapeString(f.Description), "link": f.Link, "language": f.Language,
		"author": f.ITunesExt.Author, "image": f.ITunesExt.Image, "explicit": f.ITunesExt.Explicit,
		"type": f.ITunesExt.Type, "guid": extValue(f.Extensions, "guid"), "medium": extValue(f.Extensions, "medium"),
	}
	want := map[string]string{
		"title": "Acme Daily", "description": b.feed.Description, "link": "https://acme.example/", "language": "en-US",
		"author": "Acme Newsroom", "image": "https://acme.example/cover.png", "explicit": "false",
		"type": "episodic", "guid": feed.PodcastGUID(publicBase + narrator.FeedPath(b.feed.Token)), "medium": "podcast",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("channel (-want +got):\n%s", diff)
	}
	if o := f.ITunesExt.Owner; o == nil || o.Name != "Acme Audio" || o.Email != "podcasts@acme.example" {
		t.Errorf("itunes:owner %+v", o)
	}
	if cats := f.ITunesExt.Categories; len(cats) != 1 || cats[0].Text != "News" || cats[0].Subcategory == nil || cats[0].Subcategory.Text != "Daily News" {
		t.Errorf("categories %+v", cats)
	}

	// The items: processed audios only, newest first.
	if len(f.Items) != 2 {
		t.Fatalf("%d items, want 2", len(f.Items))
	}
	for i, a := range []*narrator.Audio{second, first} {
		created := a.CreatedAt
		a, err := b.store.FindAudio(t.Context(), b.project.ID, strconv.FormatInt(a.ID, 10))
		if err != nil {
			t.Fatal(err)
		}
		it := f.Items[i]
		mp3, _ := a.MediaOf(narrator.ContentTypeMP3)
		if it.Title != a.Title || it.GUID != feed.GUID(a) || it.Link != a.ArticleURL {
			t.Errorf("item %d: title %q guid %q link %q", i, it.Title, it.GUID, it.Link)
		}
		// The article's publication date, else the audio's creation.
		wantDate, wantLang := created.Truncate(time.Second), "en-US"
		if i == 1 { // first
			wantDate, wantLang = time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC), "en-GB"
		}
		if it.PublishedParsed == nil || !it.PublishedParsed.Equal(wantDate) {
			t.Errorf("item %d: published %v, want %v", i, it.PublishedParsed, wantDate)
		}
		wantImage := "" // an audio without an image has none of its own
		if i == 1 {
			wantImage = "https://acme.example/first.jpg?w=1400&h=1400"
		}
		if it.ITunesExt == nil || it.ITunesExt.Duration != "61" || it.ITunesExt.Image != wantImage {
			t.Errorf("item %d: itunes %+v, want duration 61, image %q", i, it.ITunesExt, wantImage)
		}
		if txt := it.Extensions["podcast"]["txt"]; len(txt) != 1 || txt[0].Attrs["purpose"] != "ai-content" || txt[0].Value == "" {
			t.Errorf("item %d: podcast:txt %+v, want one with purpose ai-content", i, txt)
		}
		wantEnc := []*gofeed.Enclosure{{URL: mediaBase + mp3.Key, Length: strconv.FormatInt(mp3.Bytes, 10), Type: "audio/mpeg"}}
		if diff := cmp.Diff(wantEnc, it.Enclosures); diff != "" {
			t.Errorf("item %d: enclosures (-want +got):\n%s", i, diff)
		}
		_, vttKey := narrator.TranscriptKeys(mp3.Key)
		var gotTr []map[string]string
		for _, e := range it.Extensions["podcast"]["transcript"] {
			gotTr = append(gotTr, e.Attrs)
		}
		wantTr := []map[string]string{
			{"url": mediaBase + vttKey, "type": "text/vtt", "language": wantLang, "rel": "captions"},
			{"url": mediaBase + narrator.PodcastTranscriptKey(mp3.Key), "type": "application/json", "language": wantLang},
		}
		if diff := cmp.Diff(wantTr, gotTr); diff != "" {
			t.Errorf("item %d: podcast:transcript (-want +got):\n%s", i, diff)
		}
		if ch := it.Extensions["podcast"]["chapters"]; len(ch) != 1 ||
			!cmp.Equal(ch[0].Attrs, map[string]string{"url": mediaBase + narrator.ChaptersKey(mp3.Key), "type": "application/json+chapters"}) {
			t.Errorf("item %d: podcast:chapters %+v", i, ch)
		}
	}
	// Descriptions are HTML, as podcast apps read them: text as typed, and
	// a link back to the article.
	const back = `<p><a href="https://acme.example/first">https://acme.example/first</a></p>`
	if d := f.Items[1].Description; d != "<p>The first paragraph &amp; more. A second one.</p>"+back {
		t.Errorf("description %q", d)
	}
	if c := f.Items[1].Content; c != "<p>The first paragraph &amp; more.</p><p>A second one.</p>"+back {
		t.Errorf("content:encoded %q", c)
	}
	// The author is the item's itunes:author and podcast:person; an audio
	// without one has the feed's.
	if p := f.Items[1].Extensions["podcast"]["person"]; len(p) != 1 || p[0].Value != "Ann" || p[0].Attrs["role"] != "author" || p[0].Attrs["group"] != "writing" {
		t.Errorf("podcast:person %+v, want Ann, author", p)
	}
	if p := f.Items[0].Extensions["podcast"]["person"]; len(p) != 0 || f.Items[0].ITunesExt.Author != b.feed.Author {
		t.Errorf("an audio without author: podcast:person %+v, itunes:author %q", p, f.Items[0].ITunesExt.Author)
	}
	if f.Items[0].Link != "" || f.Items[0].Description != "<p>Plain text only.</p>" {
		t.Errorf("an audio without article URL has link %q, description %q", f.Items[0].Link, f.Items[0].Description)
	}
	// A HEAD gets the headers alone.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, b.url(), nil)
	head, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != http.StatusOK || head.Header.Get("ETag") != resp.Header.Get("ETag") {
		t.Errorf("HEAD: %s, ETag %q", head.Status, head.Header.Get("ETag"))
	}
}

// TestAwkwardText puts into every text what breaks naive XML: markup
// characters, a CDATA terminator, emoji, and control characters XML 1.0
// cannot hold.
func TestAwkwardText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const nasty = "Tom & Jerry <b>bold</b> ]]> \"quoted\" 'single' 🎙️📰 \x01\x07\x0b\x1b\x7f\u0085\ufffe end"
	const clean = "Tom & Jerry <b>bold</b> ]]> \"quoted\" 'single' 🎙️📰 \x7f\u0085 end"
	b.feed.Title, b.feed.Description, b.feed.Author = nasty, nasty, nasty
	if err := b.store.SaveFeed(t.Context(), b.feed); err != nil {
		t.Fatal(err)
	}
	b.finish(t, &narrator.Audio{Title: nasty, Author: nasty, Body: "<p>" + strings.ReplaceAll(nasty, "<", "&lt;") + "</p>",
		ArticleURL: "https://acme.example/a?x=1&y=<2>"})
	f := b.mustFeed(t)
	if f.Title != clean || html.UnescapeString(f.Description) != clean || f.ITunesExt.Author != clean {
		t.Errorf("channel title %q description %q author %q, want %q", f.Title, f.Description, f.ITunesExt.Author, clean)
	}
	if len(f.Items) != 1 {
		t.Fatalf("%d items", len(f.Items))
	}
	it := f.Items[0]
	if it.Title != clean || it.ITunesExt.Author != clean || it.Link != "https://acme.example/a?x=1&y=<2>" {
		t.Errorf("item title %q author %q link %q", it.Title, it.ITunesExt.Author, it.Link)
	}
	if !strings.Contains(it.Description, "Tom &amp; Jerry &lt;b&gt;bold&lt;/b&gt; ]]&gt;") {
		t.Errorf("item description %q", it.Description)
	}
}

func TestConditionalGET(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.finish(t, &narrator.Audio{Title: "One"})
	resp, _ := get(t, b.url(), nil)
	etag, lastMod := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")

	// Nothing changed: 304, without a body, with the validators.
	for name, hdr := range map[string]map[string]string{
		"If-None-Match":     {"If-None-Match": etag},
		"If-Modified-Since": {"If-Modified-Since": lastMod},
		"both":              {"If-None-Match": etag, "If-Modified-Since": lastMod},
		"several ETags":     {"If-None-Match": `"other", ` + etag},
	} {
		resp, body := get(t, b.url(), hdr)
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etag {
			t.Errorf("%s: %s, %d bytes, ETag %q", name, resp.Status, len(body), resp.Header.Get("ETag"))
		}
	}
	// A stale validator gets the feed.
	if resp, _ := get(t, b.url(), map[string]string{"If-None-Match": `"stale"`}); resp.StatusCode != http.StatusOK {
		t.Errorf("stale ETag: %s", resp.Status)
	}

	// Every kind of change gives a new ETag and a later Last-Modified, so
	// that clients sending either validator see it.
	changes := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"new audio", func(t *testing.T) { b.finish(t, &narrator.Audio{Title: "Two", ExternalID: "two"}) }},
		{"audio deleted", func(t *testing.T) {
			if _, err := b.store.DeleteAudio(t.Context(), b.project.ID, "two"); err != nil {
				t.Fatal(err)
			}
		}},
		{"settings", func(t *testing.T) {
			b.feed.Title = "Renamed"
			if err := b.store.SaveFeed(t.Context(), b.feed); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range changes {
		b.clock.Advance(time.Second)
		c.change(t)
		for name, hdr := range map[string]map[string]string{
			"If-None-Match":     {"If-None-Match": etag},
			"If-Modified-Since": {"If-Modified-Since": lastMod},
		} {
			if resp, _ := get(t, b.url(), hdr); resp.StatusCode != http.StatusOK {
				t.Errorf("%s, then %s: %s", c.name, name, resp.Status)
			}
		}
		resp, _ := get(t, b.url(), nil)
		if resp.Header.Get("ETag") == etag || resp.Header.Get("Last-Modified") == lastMod {
			t.Errorf("%s: ETag %q and Last-Modified %q did not change", c.name, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"))
		}
		etag, lastMod = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.finish(t, &narrator.Audio{Title: "One"})
	old := b.url()
	if resp, _ := get(t, old, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	for _, path := range []string{
		narrator.FeedPath(mustToken(t)),        // never issued
		"/feeds/" + b.feed.Token,               // no .xml
		"/feeds/" + b.feed.Token + ".rss",      // another suffix
		"/feeds/" + b.feed.Token[:20] + ".xml", // malformed
		"/feeds/" + strings.ToUpper(b.feed.Token) + ".xml",
	} {
		resp, _ := get(t, b.srv.URL+path, nil)
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %s, Cache-Control %q", path, resp.Status, resp.Header.Get("Cache-Control"))
		}
	}

	// Only GET and HEAD read a feed.
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req, _ := http.NewRequestWithContext(t.Context(), m, old, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %s, Allow %q; want 405 with Allow", m, resp.Status, resp.Header.Get("Allow"))
		}
	}

	// Rotation: the old URL stops working at once, the new one works.
	f, err := b.store.RotateFeedToken(t.Context(), b.project.ID, mustToken(t))
	if err != nil {
		t.Fatal(err)
	}
	b.feed = f
	if resp, _ := get(t, old, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("old URL after rotation: %s", resp.Status)
	}
	b.mustFeed(t)

	// Turned off: 404.
	b.feed.Enabled = false
	if err := b.store.SaveFeed(t.Context(), b.feed); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, b.url(), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("feed turned off: %s", resp.Status)
	}
}

func TestCapAndOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var ids []int64
	for i := range narrator.MaxFeedItems + 5 {
		if i%50 == 0 {
			// Some unprocessed audios between the others.
			if _, err := b.store.CreateAudio(t.Context(), &narrator.Audio{ProjectID: b.project.ID, Body: "Waiting."}); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 != 0 { // some share a creation time
			b.clock.Advance(time.Minute)
		}
		ids = append(ids, b.finish(t, &narrator.Audio{Title: fmt.Sprintf("Audio %d", i)}).ID)
	}
	f := b.mustFeed(t)
	if len(f.Items) != narrator.MaxFeedItems {
		t.Fatalf("%d items, want %d", len(f.Items), narrator.MaxFeedItems)
	}
	// Newest first; equal times by descending ID, which here is creation order.
	for i, it := range f.Items {
		want := ids[len(ids)-1-i]
		if it.GUID != feed.GUID(&narrator.Audio{ID: want, ProjectID: b.project.ID}) {
			t.Fatalf("item %d is %s, want audio %d", i, it.GUID, want)
		}
	}
}

// TestRealRendering finishes an audio rendered by the real pipeline, with
// the engine stand-in and lame, into a real media store: the enclosure's
// length is the MP3's size as the media store holds it.
func TestRealRendering(t *testing.T) {
	t.Parallel()
	b := setup(t)
	media, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]pipeline.Synthesizer{}
	for _, v := range narrator.Voices() {
		engines[v.Engine] = standin.New(0)
	}
	pipe := pipeline.New(pipeline.Config{Engines: engines, Media: media, ScratchDir: t.TempDir(), Workers: 2})
	t.Cleanup(func() { pipe.Close() })
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "Rendered", Body: "<p>One sentence here. And another one, a little longer.</p>"}
	if _, err := b.store.CreateAudio(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	r, err := pipe.Render(t.Context(), a, b.project)
	if err != nil {
		t.Fatal(err)
	}
	b.finishRendering(t, a, r)

	f := b.mustFeed(t)
	if len(f.Items) != 1 || len(f.Items[0].Enclosures) != 1 {
		t.Fatalf("items %+v", f.Items)
	}
	enc := f.Items[0].Enclosures[0]
	key, ok := strings.CutPrefix(enc.URL, mediaBase)
	if !ok || key != r.Keys[narrator.ContentTypeMP3] {
		t.Fatalf("enclosure URL %q, want %s%s", enc.URL, mediaBase, r.Keys[narrator.ContentTypeMP3])
	}
	obj, _, err := media.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	n, err := io.Copy(io.Discard, obj)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || enc.Length != strconv.FormatInt(n, 10) {
		t.Errorf("enclosure length %s, the stored MP3 has %d bytes", enc.Length, n)
	}
	if want := strconv.FormatInt((r.Duration.Milliseconds()+500)/1000, 10); f.Items[0].ITunesExt.Duration != want {
		t.Errorf("duration %s, want %s", f.Items[0].ITunesExt.Duration, want)
	}
	// Every file the item links to is stored, in its spec's shape.
	for _, e := range f.Items[0].Extensions["podcast"]["transcript"] {
		if e.Attrs["type"] != "application/json" {
			continue
		}
		var tr struct {
			Version  string `json:"version"`
			Segments []struct {
				StartTime, EndTime float64
				Body               string
			} `json:"segments"`
		}
		readLinked(t, media, e.Attrs["url"], &tr)
		if tr.Version != "1.0.0" || len(tr.Segments) == 0 || !strings.Contains(tr.Segments[len(tr.Segments)-1].Body, "longer.") {
			t.Errorf("JSON transcript %+v", tr)
		}
	}
	var ch struct {
		Version  string `json:"version"`
		Chapters []struct {
			StartTime float64
			Title     string
		} `json:"chapters"`
	}
	readLinked(t, media, f.Items[0].Extensions["podcast"]["chapters"][0].Attrs["url"], &ch)
	if ch.Version != "1.2.0" || len(ch.Chapters) != 1 || ch.Chapters[0].Title != "Rendered" {
		t.Errorf("chapters %+v", ch)
	}
}

// readLinked decodes into v the JSON object stored in media at url, a
// media URL; it fails on a field v lacks.
func readLinked(t *testing.T, media *localfs.Store, url string, v any) {
	t.Helper()
	key, ok := strings.CutPrefix(url, mediaBase)
	if !ok {
		t.Fatalf("%s is not a media URL", url)
	}
	obj, _, err := media.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	dec := json.NewDecoder(obj)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
}

// TestItemTexts checks the descriptions made from long articles and the
// titles of untitled ones.
func TestItemTexts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := strings.Repeat("Word after word in a long article. ", 200)
	b.finish(t, &narrator.Audio{Title: "Long", Body: "# Heading\n\n" + long})
	b.clock.Advance(time.Minute)
	b.finish(t, &narrator.Audio{Body: "<p>An untitled piece starts with this sentence, which goes on and on for quite a while.</p>"})
	f := b.mustFeed(t)
	if len(f.Items) != 2 {
		t.Fatalf("%d items", len(f.Items))
	}
	untitled, longItem := f.Items[0], f.Items[1]
	if untitled.Title != "An untitled piece starts with this sentence, which goes on and on for quite a…" {
		t.Errorf("untitled audio's title %q", untitled.Title)
	}
	d := strings.TrimSuffix(strings.TrimPrefix(longItem.Description, "<p>"), "</p>")
	if !strings.HasPrefix(d, "Heading Word after word") || !strings.HasSuffix(d, "…") || len([]rune(d)) > 601 || len([]rune(d)) < 500 {
		t.Errorf("description of a long article (%d characters): %q", len([]rune(d)), d)
	}
}

// TestSignedProject checks that a signed project's feed gives none of its
// articles' text: no excerpt, and no transcripts, which are the text.
func TestSignedProject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	b.finish(t, &narrator.Audio{Title: "Paywalled", Author: "Ann", ArticleURL: "https://acme.example/paid",
		Body: "<p>Only for subscribers.</p>"})
	access, err := b.store.RotateEmbedSecret(ctx, b.project.ID, narrator.EmbedSecretPrefix+"feed-test")
	if err != nil {
		t.Fatal(err)
	}
	access.Mode = narrator.AccessSigned
	if err := b.store.SetProjectAccess(ctx, &access); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, b.url(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	for _, secret := range []string{"subscribers", "transcript"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("a signed project's feed holds %q:\n%s", secret, body)
		}
	}
	f := mustParse(t, body)
	if len(f.Items) != 1 {
		t.Fatalf("%d items, want 1", len(f.Items))
	}
	it := f.Items[0]
	const back = `<p><a href="https://acme.example/paid">https://acme.example/paid</a></p>`
	if it.Description != "<p>Paywalled</p>"+back || it.Content != "<p>Paywalled</p>"+back {
		t.Errorf("description %q, content %q: want the title and the link", it.Description, it.Content)
	}
	if txt := it.Extensions["podcast"]["txt"]; len(txt) != 1 || txt[0].Attrs["purpose"] != "ai-content" {
		t.Errorf("podcast:txt %+v", txt)
	}
}

// TestPodcastGUID checks podcast:guid against the example of the
// Podcasting 2.0 namespace's documentation.
func TestPodcastGUID(t *testing.T) {
	t.Parallel()
	const want = "917393e3-1b1e-5cef-ace4-edaa54e1f810"
	for _, u := range []string{"https://mp3s.nashownotes.com/pc20rss.xml", "http://mp3s.nashownotes.com/pc20rss.xml//", "mp3s.nashownotes.com/pc20rss.xml"} {
		if got := feed.PodcastGUID(u); got != want {
			t.Errorf("PodcastGUID(%q) = %s, want %s", u, got, want)
		}
	}
}
