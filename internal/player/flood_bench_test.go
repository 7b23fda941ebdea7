package player_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/listens"
	"github.com/narrator/narrator/internal/player"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// BenchmarkCreatesUnderListenFlood measures API creates over loopback on
// one SQLite store, first alone, then while six clients flood
// POST /embed/events with listening events (each event from a new client
// key, as from many addresses, so that no per-client limit holds them
// back): at 500 events a second in all (about the security review's rate),
// and as fast as they can. b.N creates are made in each phase, one at a
// time. It reports
// the creates' median latency in each phase and their ratio, the events
// answered per second, and the database writes per second during the
// flood: the batches of listening counts (listen-writes/s) and those plus
// the creates (db-writes/s).
//
//	go test ./internal/player -run '^$' -bench CreatesUnderListenFlood -benchtime 300x
func BenchmarkCreatesUnderListenFlood(b *testing.B) {
	for _, rate := range []int{500, 0} {
		name := "max"
		if rate > 0 {
			name = fmt.Sprint(rate, "_per_s")
		}
		b.Run(name, func(b *testing.B) { benchListenFlood(b, rate) })
	}
}

// benchListenFlood is BenchmarkCreatesUnderListenFlood with a flood of rate
// events a second, or as many as the clients can send when rate is 0.
func benchListenFlood(b *testing.B, rate int) {
	st, queue := sqlitetest.Open(b, sqlite.Options{}, jobs.Config{})
	writes := &countingStore{Store: st}
	counter := listens.New(listens.Config{Store: writes})
	b.Cleanup(counter.Close)
	events, err := player.New(player.Deps{
		Store:     st,
		Listens:   counter,
		ClientKey: func(r *http.Request) string { return r.Header.Get("X-Test-Client") },
		MediaURL:  func(key string) string { return "https://media.test/media/" + key },
	})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", httpapi.NewServer(httpapi.Deps{Store: st, Queue: queue,
		MediaURL: func(key string) string { return "https://media.test/media/" + key }}))
	mux.Handle("/embed/", events)
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)

	acct := &narrator.Account{Name: "Bench"}
	if err := st.CreateAccount(b.Context(), acct); err != nil {
		b.Fatal(err)
	}
	secret, prefix, hash, err := narrator.NewAPIKey()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateAPIKey(b.Context(), acct.ID, hash, prefix); err != nil {
		b.Fatal(err)
	}
	title, body, _ := narrator.DefaultVoices("en_US")
	p := &narrator.Project{AccountID: acct.ID, Title: "B", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	if err := st.CreateProject(b.Context(), p); err != nil {
		b.Fatal(err)
	}
	listened := &narrator.Audio{ProjectID: p.ID, Title: "Listened", Body: "Heard by many."}
	if _, err := st.CreateAudio(b.Context(), listened); err != nil {
		b.Fatal(err)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var created atomic.Int64
	creates := func() []time.Duration {
		out := make([]time.Duration, 0, b.N)
		for range b.N {
			i := created.Add(1)
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v3/projects/%d/audio", srv.URL, p.ID),
				strings.NewReader(fmt.Sprintf(`{"title":"T%d","body":"An article, number %d. It has two sentences.","external_id":"e%d"}`, i, i, i)))
			req.Header.Set("Authorization", "Bearer "+secret)
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			res.Body.Close()
			out = append(out, time.Since(start))
			if res.StatusCode != http.StatusOK {
				b.Fatalf("create: %d", res.StatusCode)
			}
		}
		return out
	}

	b.ResetTimer()
	base := median(creates())

	ctx, stop := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	var sent atomic.Int64
	event := fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, p.ID, listened.ID)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tick <-chan time.Time
			if rate > 0 {
				t := time.NewTicker(6 * time.Second / time.Duration(rate))
				defer t.Stop()
				tick = t.C
			}
			for i := 0; ctx.Err() == nil; i++ {
				if tick != nil {
					select {
					case <-tick:
					case <-ctx.Done():
						return
					}
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/embed/events", strings.NewReader(event))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Test-Client", fmt.Sprintf("%d-%d", w, i))
				res, err := client.Do(req)
				if err != nil {
					return
				}
				res.Body.Close()
				if res.StatusCode == http.StatusNoContent {
					sent.Add(1)
				}
			}
		}()
	}
	flushes0 := writes.n.Load()
	start := time.Now()
	loaded := median(creates())
	elapsed := time.Since(start).Seconds()
	flushes := writes.n.Load() - flushes0
	stop()
	wg.Wait()
	b.StopTimer()

	b.ReportMetric(float64(base.Microseconds())/1000, "base-ms")
	b.ReportMetric(float64(loaded.Microseconds())/1000, "flood-ms")
	b.ReportMetric(float64(loaded)/float64(base), "ratio")
	b.ReportMetric(float64(sent.Load())/elapsed, "events/s")
	b.ReportMetric(float64(flushes)/elapsed, "listen-writes/s")
	b.ReportMetric(float64(flushes+int64(b.N))/elapsed, "db-writes/s")
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
