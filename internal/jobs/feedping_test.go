package jobs_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/sqlite"
)

const pingPublicURL = "https://narrator.example"

// pingBackends open stores that ping WebSub hubs (Options.FeedPings), with
// a clock stopped a minute ago, so that their pings are due at once and
// all in one window.
var pingBackends = []struct {
	name string
	open func(t *testing.T) (store, queue, riverDB)
}{
	{"sqlite", func(t *testing.T) (store, queue, riverDB) {
		st, q, rdb := openSQLiteOpts(t, sqlite.Options{EventBody: eventBody, FeedPings: true}, queueConfig)
		st.(*sqlite.Store).Now = stopped()
		return st, q, rdb
	}},
	{"postgres", func(t *testing.T) (store, queue, riverDB) {
		st, q, rdb := openPostgresOpts(t, postgres.Options{EventBody: eventBody, FeedPings: true})
		st.(*postgres.Store).Now = stopped()
		return st, q, rdb
	}},
}

// stopped returns a clock stopped a minute ago.
func stopped() func() time.Time {
	at := time.Now().Add(-time.Minute).Truncate(time.Second).UTC()
	return func() time.Time { return at }
}

// pingHub is a loopback WebSub hub that fails its first failures pings
// with 503 and records every ping's form.
type pingHub struct {
	mu       sync.Mutex
	failures int
	pings    []url.Values
}

func (h *pingHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pings = append(h.pings, r.PostForm)
	if len(h.pings) <= h.failures {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *pingHub) got() []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.pings)
}

// mustFeed turns the feed of the bundle's project on.
func (b *testBundle) mustFeed(t *testing.T) *narrator.Feed {
	t.Helper()
	tok, err := narrator.NewFeedToken()
	if err != nil {
		t.Fatal(err)
	}
	f := &narrator.Feed{ProjectID: b.audio.ProjectID, Enabled: true, Title: "Daily", Language: "en-US", Token: tok}
	if err := b.store.SaveFeed(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	return f
}

func (b *testBundle) pingJobs(t *testing.T) []jobRow {
	var out []jobRow
	for _, j := range b.river.jobs(t) {
		if j.Kind == (jobs.FeedPingArgs{}).Kind() {
			out = append(out, j)
		}
	}
	return out
}

// TestFeedPing changes a feed 50 times in one window, on a store that
// pings its hub: one job, which pings the loopback hub with the feed's URL,
// and again after the hub failed.
func TestFeedPing(t *testing.T) {
	t.Parallel()
	for _, be := range pingBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be.open)
			// The audio would ping once synthesised, in a window of its own
			// if the clock moved on.
			if _, err := b.store.DeleteAudio(t.Context(), b.audio.ProjectID, "a"); err != nil {
				t.Fatal(err)
			}
			for range 50 {
				b.mustFeed(t)
			}
			f, err := b.store.FindFeed(t.Context(), b.audio.ProjectID)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(b.pingJobs(t)); n != 1 {
				t.Fatalf("50 changes in one window made %d ping jobs, want 1", n)
			}
			hub := &pingHub{failures: 1}
			srv := httptest.NewServer(hub)
			t.Cleanup(srv.Close)
			w := b.workers()
			// The guarded fetcher refuses loopback but where tests allow it.
			w.FeedPing = jobs.NewFeedPingWorker(b.store, feed.NewPinger(fetch.New(fetch.Options{AllowPrivate: true})),
				jobs.FeedPingConfig{Hub: srv.URL, PublicURL: pingPublicURL, RetryBase: 20 * time.Millisecond})
			if err := b.queue.Start(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.queue.Stop(context.Background()) })
			deadline := time.Now().Add(20 * time.Second)
			for j := b.pingJobs(t); len(j) != 1 || j[0].State != "completed"; j = b.pingJobs(t) {
				if time.Now().After(deadline) {
					t.Fatalf("ping jobs %+v, hub got %v", j, hub.got())
				}
				time.Sleep(20 * time.Millisecond)
			}
			ping := url.Values{"hub.mode": {"publish"}, "hub.url": {pingPublicURL + narrator.FeedPath(f.Token)}}
			if got := hub.got(); len(got) != 2 || !equalForms(got[0], ping) || !equalForms(got[1], ping) {
				t.Errorf("hub got %v; want %v, failed, then again", got, ping)
			}
		})
	}
}

func equalForms(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestFeedPingNoHub checks that a store opened without FeedPings, as
// where no hub is configured, enqueues no ping.
func TestFeedPingNoHub(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.mustFeed(t)
		if _, err := b.store.DeleteAudio(t.Context(), b.audio.ProjectID, "a"); err != nil {
			t.Fatal(err)
		}
		if j := b.pingJobs(t); len(j) != 0 {
			t.Errorf("ping jobs %+v, want none", j)
		}
	})
}
