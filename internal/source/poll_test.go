package source_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/source"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// publisher is a loopback server of one feed that the test changes.
type publisher struct {
	mu      sync.Mutex
	items   []rssItem
	etag    string
	gets    int
	headers http.Header
}

type rssItem struct {
	guid, title, body string
	published         time.Time
}

func (p *publisher) set(items ...rssItem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items = items
	p.etag = fmt.Sprintf(`"v%d"`, time.Now().UnixNano())
}

func (p *publisher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets++
	p.headers = r.Header.Clone()
	if p.etag != "" && r.Header.Get("If-None-Match") == p.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/rss+xml")
	w.Header().Set("ETag", p.etag)
	fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Daily</title><link>https://example.com/</link>`)
	for _, it := range p.items {
		fmt.Fprintf(w, `<item><guid>%s</guid><title>%s</title><link>https://example.com/%s</link><description>Summary.</description><content:encoded><![CDATA[<p>%s</p>]]></content:encoded><author>ann@example.com (Ann)</author><category>News</category><pubDate>%s</pubDate></item>`,
			it.guid, it.title, it.guid, it.body, it.published.Format(time.RFC1123Z))
	}
	fmt.Fprint(w, `</channel></rss>`)
}

// testBundle is what the poll tests share.
type testBundle struct {
	store   *sqlite.Store
	project *narrator.Project
	now     time.Time
	poller  *source.Poller
}

// serve starts h on loopback, closed when the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func setup(t *testing.T, opts fetch.Options) *testBundle {
	t.Helper()
	st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
	ctx := t.Context()
	acct := &narrator.Account{Name: "Acme"}
	if err := st.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acct.ID, Title: "Feeds", Type: narrator.ProjectTypeRSS, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := st.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, project: p, now: time.Now().UTC()}
	b.poller = b.newPoller(opts)
	return b
}

func (b *testBundle) newPoller(opts fetch.Options) *source.Poller {
	return source.New(b.store, source.Options{Client: fetch.New(opts)})
}

func (b *testBundle) mustSource(t *testing.T, url string, change func(*narrator.Source)) *narrator.Source {
	t.Helper()
	src := narrator.NewSource(b.project.ID, url)
	if change != nil {
		change(src)
	}
	if err := b.store.CreateSource(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	return src
}

func (b *testBundle) mustPoll(t *testing.T, id int64) *narrator.Source {
	t.Helper()
	src, err := b.poller.Poll(t.Context(), id)
	if err != nil {
		t.Fatalf("Poll(%d): %v", id, err)
	}
	return src
}

// audios returns the project's audios by external ID.
func (b *testBundle) audios(t *testing.T) map[string]*narrator.Audio {
	t.Helper()
	list, err := b.store.ListAudios(t.Context(), b.project.ID, time.Time{}, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*narrator.Audio{}
	for _, a := range list {
		out[a.ExternalID] = a
	}
	return out
}

// testStart is the time the feeds' dates count back from: one instant, so
// that an item's date is the same on every read.
var testStart = time.Now().Truncate(time.Second)

func item(guid, body string, age time.Duration) rssItem {
	return rssItem{guid: guid, title: "Title " + guid, body: body, published: testStart.Add(-age)}
}

func TestPollNarratesEachItemOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, fetch.Options{AllowPrivate: true})
	pub := &publisher{}
	srv := serve(t, pub)
	pub.set(item("c", "Third.", time.Hour), item("b", "Second.", 2*time.Hour), item("a", "First.", 3*time.Hour))
	src := b.mustSource(t, srv.URL, func(s *narrator.Source) { s.Header = map[string]string{"Authorization": "Bearer paid"} })

	got := b.mustPoll(t, src.ID)
	if got.State.Status != narrator.SourceStatusOK || got.State.Created != 3 || got.State.ItemsSeen != 3 || got.State.LastError != "" {
		t.Fatalf("first read: state %+v; want ok, 3 created, 3 seen", got.State)
	}
	if pub.headers.Get("Authorization") != "Bearer paid" {
		t.Errorf("the feed's header was not sent: %v", pub.headers)
	}
	audios := b.audios(t)
	a := audios[narrator.ItemExternalID(src.ID, "a")]
	if a == nil || a.Title != "Title a" || a.Body != "<p>First.</p>" || a.Author != "Ann" || a.ArticleURL != "https://example.com/a" ||
		a.Metadata[narrator.MetadataCategories] != "News" || a.Metadata[narrator.MetadataPublished] == "" {
		t.Fatalf("audio of item a = %+v", a)
	}

	// Unchanged: a conditional GET, nothing narrated.
	got = b.mustPoll(t, src.ID)
	if got.State.Status != narrator.SourceStatusNotModified || got.State.Created != 3 || got.State.Updated != 0 {
		t.Fatalf("unchanged read: state %+v; want not_modified, nothing more", got.State)
	}

	// b changes, d is new, a leaves the feed.
	pub.set(item("d", "Fourth.", 0), item("c", "Third.", time.Hour), item("b", "Second, corrected.", 2*time.Hour))
	got = b.mustPoll(t, src.ID)
	if got.State.Created != 4 || got.State.Updated != 1 {
		t.Fatalf("changed read: state %+v; want 4 created, 1 updated", got.State)
	}
	audios = b.audios(t)
	if len(audios) != 4 {
		t.Fatalf("%d audios; want 4, a kept", len(audios))
	}
	if ab := audios[narrator.ItemExternalID(src.ID, "b")]; ab.Body != "<p>Second, corrected.</p>" || ab.Revision != 2 {
		t.Errorf("changed item b: body %q revision %d; want the new body, revision 2", ab.Body, ab.Revision)
	}
	if ac := audios[narrator.ItemExternalID(src.ID, "c")]; ac.Revision != 1 {
		t.Errorf("unchanged item c: revision %d; want 1", ac.Revision)
	}

	// A restart: a new poller on the same store narrates nothing again,
	// even when the validators are lost.
	pub.set(item("d", "Fourth.", 0), item("c", "Third.", time.Hour), item("b", "Second, corrected.", 2*time.Hour))
	b.poller = b.newPoller(fetch.Options{AllowPrivate: true})
	got = b.mustPoll(t, src.ID)
	if got.State.Status != narrator.SourceStatusOK || got.State.Created != 4 || got.State.Updated != 1 {
		t.Fatalf("read after a restart: state %+v; want ok and no change", got.State)
	}
	for id, a := range b.audios(t) {
		if want := map[bool]int{true: 2, false: 1}[strings.HasSuffix(id, ":b")]; a.Revision != want {
			t.Errorf("audio %s: revision %d after the restart; want %d", id, a.Revision, want)
		}
	}
}

func TestPollBackfill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*narrator.Source)
		want   int
	}{
		{"default latest 10", nil, 10},
		{"latest 3", func(s *narrator.Source) { s.BackfillItems = 3 }, 3},
		{"newer than 5 days", func(s *narrator.Source) { s.BackfillSince = 5*24*time.Hour - time.Minute }, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, fetch.Options{AllowPrivate: true})
			pub := &publisher{}
			srv := serve(t, pub)
			var archive []rssItem
			for i := range 40 { // ten years would do the same
				archive = append(archive, item(fmt.Sprint("old", i), "Old.", time.Duration(i)*24*time.Hour))
			}
			pub.set(archive...)
			src := b.mustSource(t, srv.URL, tc.change)
			if got := b.mustPoll(t, src.ID); got.State.Created != int64(tc.want) || got.State.ItemsSeen != 40 {
				t.Fatalf("first read: state %+v; want %d created, 40 seen", got.State, tc.want)
			}
			// Later, every new item is narrated, and no old one.
			pub.set(append([]rssItem{item("new", "New.", 0)}, archive...)...)
			if got := b.mustPoll(t, src.ID); got.State.Created != int64(tc.want)+1 {
				t.Fatalf("second read: state %+v; want %d created", got.State, tc.want+1)
			}
			if n := len(b.audios(t)); n != tc.want+1 {
				t.Errorf("%d audios; want %d", n, tc.want+1)
			}
		})
	}
}

// TestPollCluster has two pollers, as two nodes, read the same due feeds at
// once: each item is narrated once.
func TestPollCluster(t *testing.T) {
	t.Parallel()
	b := setup(t, fetch.Options{AllowPrivate: true})
	pub := &publisher{}
	srv := serve(t, pub)
	pub.set(item("a", "A.", time.Hour), item("b", "B.", 2*time.Hour))
	var ids []int64
	for range 3 {
		ids = append(ids, b.mustSource(t, srv.URL, nil).ID)
	}
	other := b.newPoller(fetch.Options{AllowPrivate: true})
	var wg sync.WaitGroup
	for _, p := range []*source.Poller{b.poller, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.RunDue(t.Context())
		}()
	}
	wg.Wait()
	if n := len(b.audios(t)); n != 6 {
		t.Fatalf("%d audios; want 6 (2 items of 3 feeds)", n)
	}
	for _, id := range ids {
		src, err := b.store.Source(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if src.State.Created != 2 {
			t.Errorf("feed %d: %d created; want 2", id, src.State.Created)
		}
	}
	if pub.gets != 3 {
		t.Errorf("the feeds were fetched %d times; want 3, once each", pub.gets)
	}
}

// TestPollItself: a feed on the server itself is refused before Narrator
// narrates its own podcast feed into itself, whatever name or address the
// URL gives it (its IP, another name, a name with a trailing dot), when
// redirected there, and when reached through a proxy (known by the marker
// on its answers), private addresses allowed as with
// --webhooks-allow-private.
func TestPollItself(t *testing.T) {
	t.Parallel()
	self := fetch.NewSelf("https://narr.test")
	server := serve(t, self.Mark(&publisher{}))
	self.Listening(server.Listener.Addr())
	port := server.URL[strings.LastIndex(server.URL, ":")+1:]
	hop := serve(t, http.RedirectHandler(server.URL+"/feeds/token.xml", http.StatusFound))
	// A proxy in front of the server: another address, the same answers.
	proxy := serve(t, self.Mark(&publisher{}))
	resolver := namedResolver{"narr.test.": "127.0.0.1", "alias.test": "127.0.0.1"}
	b := setup(t, fetch.Options{AllowPrivate: true})
	b.poller = source.New(b.store, source.Options{Client: fetch.New(fetch.Options{AllowPrivate: true, Self: self, Resolver: resolver})})
	for _, u := range []string{
		server.URL + "/feeds/token.xml",
		"http://narr.test.:" + port + "/feeds/token.xml",
		"http://alias.test:" + port + "/feeds/token.xml",
		"http://localhost:" + port + "/api/v3/openapi.json",
		hop.URL,
		proxy.URL + "/feeds/token.xml",
	} {
		src := b.mustSource(t, u, nil)
		if got := b.mustPoll(t, src.ID); got.State.Status != narrator.SourceStatusError || !strings.Contains(got.State.LastError, "own address") {
			t.Errorf("%s: state %+v; want an error naming Narrator's own address", u, got.State)
		}
	}
}

// namedResolver resolves the names of its map, and localhost.
type namedResolver map[string]string

func (r namedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// privateResolver resolves every name to a private address.
type privateResolver struct{}

func (privateResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
}

// TestPollHostileFeeds reads feeds that are malformed, huge, slow or point
// inside: each read records a clear error on its feed and nothing else.
func TestPollHostileFeeds(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zeros := make([]byte, 1<<20)
		for range 16 { // 16 MB of zeros, about 16 KB on the wire
			if _, err := zw.Write(zeros); err != nil {
				return
			}
		}
		_ = zw.Close()
	})
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		chunk := []byte(strings.Repeat("<item>", 1024))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/invalid", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><item><title>Broken</ti`)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body>Not a feed</body></html>`)
	})
	mux.HandleFunc("/notfeed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, `hello`)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<rss version="2.0"><channel><title>Huge</title>`)
		for i := range 100_000 {
			fmt.Fprintf(w, `<item><guid>%d</guid><description>x</description></item>`, i)
		}
		fmt.Fprint(w, `</channel></rss>`)
	})
	mux.HandleFunc("/bigtitle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<rss version="2.0"><channel><item><guid>t</guid><title>%s</title><description>Body.</description></item></channel></rss>`, strings.Repeat("T", 5<<20))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := serve(t, mux)

	// Loopback allowed, as the test server is one.
	open := fetch.Options{AllowPrivate: true, MaxBytes: 8 << 20}
	// A server that never answers meets the timeout, whatever it is.
	slow := fetch.Options{AllowPrivate: true, Timeout: time.Second}
	// The production setting: nothing inside.
	guarded := fetch.Options{Resolver: privateResolver{}}
	for _, tc := range []struct {
		name   string
		opts   fetch.Options
		url    string
		status string
		want   string // words of the recorded error
	}{
		{"gzip bomb", open, srv.URL + "/bomb", narrator.SourceStatusError, "larger than 8 MB"},
		{"endless body", open, srv.URL + "/endless", narrator.SourceStatusError, "larger than 8 MB"},
		{"invalid XML", open, srv.URL + "/invalid", narrator.SourceStatusError, "could not be parsed"},
		{"html page", open, srv.URL + "/html", narrator.SourceStatusError, "text/html"},
		{"not a feed", open, srv.URL + "/notfeed", narrator.SourceStatusError, "not RSS, Atom or JSON Feed"},
		{"100,000 items", open, srv.URL + "/huge", narrator.SourceStatusOK, "only the first 1000 are read"},
		{"5 MB title", open, srv.URL + "/bigtitle", narrator.SourceStatusOK, "the title of 1 item was cut to 1000 characters"},
		{"slow", slow, srv.URL + "/slow", narrator.SourceStatusError, "did not answer"},
		{"loopback", guarded, srv.URL + "/feed", narrator.SourceStatusError, "does not fetch"},
		{"name resolving to a private address", guarded, "http://intranet.example/feed", narrator.SourceStatusError, "does not fetch"},
		{"loopback port", guarded, "http://127.0.0.1:1/feed", narrator.SourceStatusError, "does not fetch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.opts)
			src := b.mustSource(t, tc.url, nil)
			got := b.mustPoll(t, src.ID)
			if got.State.Status != tc.status || !strings.Contains(got.State.LastError, tc.want) {
				t.Fatalf("state %q %q; want %q with %q", got.State.Status, got.State.LastError, tc.status, tc.want)
			}
			if tc.status == narrator.SourceStatusError {
				if got.State.Failures != 1 || !got.State.NextPollAt.After(got.State.LastFetchAt.Add(got.Interval)) {
					t.Errorf("failed read: %d failures, next poll %v after %v; want 1 and a backoff", got.State.Failures, got.State.NextPollAt, got.State.LastFetchAt)
				}
			}
			if len(got.State.LastError) > 500 {
				t.Errorf("the error is %d bytes long", len(got.State.LastError))
			}
		})
	}
}

// stalled is a loopback feed server that holds every request until
// release is closed, and tells arrived of each as it comes.
type stalled struct {
	arrived chan struct{}
	release chan struct{}
}

func (s *stalled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.arrived <- struct{}{}
	select {
	case <-s.release:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/rss+xml")
	fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Slow</title></channel></rss>`)
}

// TestPollFairAcrossAccounts: one account's many feeds fell due first and
// hang; another account's feeds, due later, are all read while they hang:
// a reader is not held back by the hanging reads beside it, and one
// account's feeds never hold every reader.
func TestPollFairAcrossAccounts(t *testing.T) {
	t.Parallel()
	// The hanging feeds hang until released, not until the fetch's own
	// timeouts end their reads.
	b := setup(t, fetch.Options{AllowPrivate: true, HeaderTimeout: time.Hour, Timeout: time.Hour})
	slow := &stalled{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	slowSrv := serve(t, slow)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(slow.release) }) }
	t.Cleanup(release) // before slowSrv.Close, which waits for handlers
	for range 12 {
		b.mustSource(t, slowSrv.URL, nil)
	}
	// The other account's feeds are created, so fall due, after them;
	// there are more of them than the readers left beside the hanging
	// ones.
	ctx := t.Context()
	acct := &narrator.Account{Name: "Other"}
	if err := b.store.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	p := *b.project
	p.ID, p.AccountID = 0, acct.ID
	if err := b.store.CreateProject(ctx, &p); err != nil {
		t.Fatal(err)
	}
	const others = source.Readers
	read := make(chan string, others)
	fast := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read <- r.URL.Path
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Fast</title></channel></rss>`)
	}))
	for i := range others {
		if err := b.store.CreateSource(ctx, narrator.NewSource(p.ID, fmt.Sprintf("%s/%d", fast.URL, i))); err != nil {
			t.Fatal(err)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		b.poller.RunDue(runCtx)
	}()
	defer func() {
		release()
		cancel()
		<-ran
	}()
	// The failures: every reader the node has held by the first
	// account's hanging feeds, or the other feeds left unread while they
	// hang. Without the fix, nothing else happens until they end.
	watchdog := time.NewTimer(time.Minute)
	defer watchdog.Stop()
	held, seen := 0, map[string]bool{}
	for len(seen) < others {
		select {
		case path := <-read:
			seen[path] = true
		case <-slow.arrived:
			if held++; held > narrator.MaxReadsPerAccount {
				t.Fatalf("%d of one account's feeds read at once; want at most %d", held, narrator.MaxReadsPerAccount)
			}
		case <-watchdog.C:
			t.Fatalf("%d of the other account's %d feeds read while one account's feeds hang", len(seen), others)
		}
	}
}

// TestPollReadBudget: a read of a feed with full text whose article pages
// hang ends when its budget does, records why, and narrates no item by
// halves.
func TestPollReadBudget(t *testing.T) {
	t.Parallel()
	b := setup(t, fetch.Options{AllowPrivate: true})
	client := fetch.New(fetch.Options{AllowPrivate: true, HeaderTimeout: time.Hour, Timeout: time.Hour})
	b.poller = source.New(b.store, source.Options{Client: client, Pages: extract.NewReader(client), ReadBudget: 3 * time.Second})
	pages := &stalled{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	pageSrv := serve(t, pages)
	t.Cleanup(func() { close(pages.release) })
	feed := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Full</title>`+
			`<item><guid>a</guid><title>A</title><link>%[1]s/a</link><description>Summary a.</description></item>`+
			`<item><guid>b</guid><title>B</title><link>%[1]s/b</link><description>Summary b.</description></item>`+
			`</channel></rss>`, pageSrv.URL)
	}))
	src := b.mustSource(t, feed.URL, func(s *narrator.Source) { s.FullText = true })
	got := b.mustPoll(t, src.ID)
	if got.State.Status != narrator.SourceStatusOK || !strings.Contains(got.State.LastError, "cut short") || got.State.Created != 0 || got.State.ItemsSeen != 0 {
		t.Errorf("state after a read over its budget: %+v; want ok, cut short, nothing created or seen", got.State)
	}
}
