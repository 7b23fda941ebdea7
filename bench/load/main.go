// Command load drives a running Narrator over its v3 API and prints
// figures. It is the measuring half of the scripts under bench/, which
// start the servers.
//
//	load creates -base URL -project ID -key KEY [-seconds 10] [-clients 8]
//	    creates per second (each one a durable row plus its job), with the
//	    same load against a bare net/http handler in this process as the
//	    baseline, and their ratio
//	load latency -base URL -project ID -key KEY -ref REF [-n 200]
//	    p50 and p99 of GET one audio, list page 1, list page 1,000 and
//	    the projects list, beside a bare handler's
//	load drain -base URL -project ID -key KEY [-audios 40] [-sentences 10]
//	    posts audios, waits until all are processed, prints audios/min
//	load bare -addr HOST:PORT -like URL
//	    serves, until killed, a bare net/http handler that encodes on every
//	    request the JSON that a GET of URL answered: the ceiling that wrk
//	    measures the API against (bench/api.sh)
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: load creates|latency|drain [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	base := fs.String("base", "http://127.0.0.1:8080", "server base URL")
	project := fs.Int64("project", 1, "project ID")
	key := fs.String("key", "", "API key")
	seconds := fs.Float64("seconds", 10, "creates: how long to load")
	clients := fs.Int("clients", 8, "creates: concurrent clients")
	ref := fs.String("ref", "", "latency: an audio ID or external ID to GET")
	n := fs.Int("n", 200, "latency: requests per endpoint")
	audios := fs.Int("audios", 40, "drain: audios to post")
	sentences := fs.Int("sentences", 10, "drain: sentences per audio")
	label := fs.String("label", "", "a label printed with each figure")
	addr := fs.String("addr", "127.0.0.1:0", "bare: address to listen on")
	like := fs.String("like", "", "bare: URL whose JSON answer the bare handler encodes")
	fs.Parse(os.Args[2:])
	c := &client{base: strings.TrimRight(*base, "/"), project: *project, key: *key, label: *label,
		http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	var err error
	switch os.Args[1] {
	case "creates":
		err = c.creates(time.Duration(*seconds*float64(time.Second)), *clients)
	case "latency":
		err = c.latency(*ref, *n)
	case "drain":
		err = c.drain(*audios, *sentences)
	case "bare":
		err = c.serveBare(*addr, *like)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type client struct {
	base    string
	project int64
	key     string
	label   string
	http    *http.Client
}

// do sends a request and fails unless the status is 200.
func (c *client) do(method, url string, body any) ([]byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	return b, nil
}

// bare starts a bare net/http handler that decodes a JSON body and answers
// a small JSON object: the baseline of a request's cost on this machine.
func bare() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if r.Body != nil {
			json.NewDecoder(r.Body).Decode(&v)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"id":1,"state":"unprocessed","media":[],"deleted":false,"metadata":{}}`)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// article returns a body of n distinct sentences.
func article(i, n int) string {
	var b strings.Builder
	for s := range n {
		fmt.Fprintf(&b, "<p>Report %d, part %d: the council met on a quiet evening and agreed on a plan for the harbour.</p>", i, s)
	}
	return b.String()
}

func (c *client) creates(d time.Duration, clients int) error {
	run := func(url string) (float64, int64, error) {
		var done atomic.Int64
		var firstErr atomic.Value
		deadline := time.Now().Add(d)
		var wg sync.WaitGroup
		start := time.Now()
		for w := range clients {
			wg.Go(func() {
				for i := 0; time.Now().Before(deadline); i++ {
					body := map[string]any{"api_key": c.key, "title": "Load", "body": article(w*1_000_000+i, 3),
						"external_id": fmt.Sprintf("load-%d-%d-%d", start.UnixNano(), w, i)}
					if _, err := c.do("POST", url, body); err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if err, ok := firstErr.Load().(error); ok {
			return 0, 0, err
		}
		return float64(done.Load()) / time.Since(start).Seconds(), done.Load(), nil
	}
	bareURL, stop, err := bare()
	if err != nil {
		return err
	}
	defer stop()
	baseline, _, err := run(bareURL + "/api/v3/projects/1/audio")
	if err != nil {
		return err
	}
	got, n, err := run(fmt.Sprintf("%s/api/v3/projects/%d/audio", c.base, c.project))
	if err != nil {
		return err
	}
	fmt.Printf("%screates/s %.0f  (bare net/http handler %.0f/s, ratio %.3f; %d clients, %v; %d creates)\n",
		c.prefix(), got, baseline, got/baseline, clients, d, n)
	return nil
}

func (c *client) prefix() string {
	if c.label == "" {
		return ""
	}
	return c.label + " "
}

// percentiles times n GETs of url and returns p50 and p99.
func (c *client) percentiles(url string, n int) (time.Duration, time.Duration, error) {
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := c.do("GET", url, nil); err != nil {
			return 0, 0, err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2], times[len(times)*99/100], nil
}

func (c *client) latency(ref string, n int) error {
	if ref == "" {
		return errors.New("-ref is required")
	}
	bareURL, stop, err := bare()
	if err != nil {
		return err
	}
	defer stop()
	b50, b99, err := c.percentiles(bareURL+"/", n)
	if err != nil {
		return err
	}
	fmt.Printf("%sbare handler      p50 %6.2f ms  p99 %6.2f ms\n", c.prefix(), ms(b50), ms(b99))
	q := "api_key=" + c.key
	for _, e := range []struct{ name, url string }{
		{"GET one audio", fmt.Sprintf("%s/api/v3/projects/%d/audio/%s?%s", c.base, c.project, ref, q)},
		{"list page 1", fmt.Sprintf("%s/api/v3/projects/%d/audio?%s&period=all&page=1", c.base, c.project, q)},
		{"list page 1000", fmt.Sprintf("%s/api/v3/projects/%d/audio?%s&period=all&page=1000", c.base, c.project, q)},
		{"list projects", fmt.Sprintf("%s/api/v3/projects?%s", c.base, q)},
	} {
		p50, p99, err := c.percentiles(e.url, n)
		if err != nil {
			return err
		}
		fmt.Printf("%s%-17s p50 %6.2f ms  p99 %6.2f ms\n", c.prefix(), e.name, ms(p50), ms(p99))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (c *client) drain(audios, sentences int) error {
	start := time.Now()
	ids := make([]string, 0, audios)
	for i := range audios {
		body := map[string]any{"api_key": c.key, "title": fmt.Sprintf("Drain %d", i), "body": article(i, sentences),
			"external_id": fmt.Sprintf("drain-%d-%d", start.UnixNano(), i)}
		b, err := c.do("POST", fmt.Sprintf("%s/api/v3/projects/%d/audio", c.base, c.project), body)
		if err != nil {
			return err
		}
		var a struct{ ID int64 }
		if err := json.Unmarshal(b, &a); err != nil {
			return err
		}
		ids = append(ids, fmt.Sprint(a.ID))
	}
	posted := time.Since(start)
	pending := ids
	for len(pending) > 0 {
		if time.Since(start) > 30*time.Minute {
			return fmt.Errorf("%d audios still unprocessed after 30 minutes", len(pending))
		}
		time.Sleep(250 * time.Millisecond)
		var still []string
		for _, id := range pending {
			b, err := c.do("GET", fmt.Sprintf("%s/api/v3/projects/%d/audio/%s?api_key=%s", c.base, c.project, id, c.key), nil)
			if err != nil {
				return err
			}
			var a struct{ State string }
			if err := json.Unmarshal(b, &a); err != nil {
				return err
			}
			switch a.State {
			case "processed":
			case "failed":
				return fmt.Errorf("audio %s failed", id)
			default:
				still = append(still, id)
			}
		}
		pending = still
	}
	took := time.Since(start)
	fmt.Printf("%s%d audios of %d sentences processed in %.1f s (posted in %.1f s): %.1f audios/min\n",
		c.prefix(), audios, sentences, took.Seconds(), posted.Seconds(), float64(audios)/took.Minutes())
	return nil
}

// audioJSON mirrors the API's v3 Audio, so that the bare handler encodes
// the same struct shapes as the server, not a generic map.
type audioJSON struct {
	ID         int64             `json:"id"`
	ExternalID *string           `json:"external_id"`
	State      string            `json:"state"`
	Media      []mediaJSON       `json:"media"`
	Deleted    bool              `json:"deleted"`
	Metadata   map[string]string `json:"metadata"`
	Error      string            `json:"error,omitempty"`
}

type mediaJSON struct {
	ID          int64  `json:"id"`
	ContentType string `json:"content_type"`
	URL         any    `json:"url"`
}

// serveBare answers every request with the JSON that like answered, decoded
// once into the API's wire shapes and encoded again each time, as the API's
// own writeJSON does: into a buffer, then with Content-Length.
func (c *client) serveBare(addr, like string) error {
	b, err := c.do("GET", like, nil)
	if err != nil {
		return err
	}
	var v any
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		var list []audioJSON
		err, v = json.Unmarshal(b, &list), list
	} else {
		var one audioJSON
		err, v = json.Unmarshal(b, &one), one
	}
	if err != nil {
		return fmt.Errorf("decode %s: %w", like, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(v); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		w.Write(buf.Bytes())
	}))
}
