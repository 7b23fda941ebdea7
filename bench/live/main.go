// Command live measures how soon a new audio can be heard: for each of a
// few articles that no test uses (bench/testdata/live), the time from the
// acknowledged POST to its first HLS segment fetched and decoded, from the
// live stream the progress extension names, beside the time to processed.
// In the same run, for the same text (its first MaxSpeechInput characters,
// cut at a sentence's end) and OpenAI's voice name alloy, as a client with
// a fixed list of voices asks, it measures the OpenAI convention's
// streaming speech (POST /v1/audio/speech): the time to its first audio
// bytes beside the time to its last, and the ratio of its first bytes to
// the live stream's first segment. It also times the first bytes of
// the same text without its heading, as a client that sends only the body
// would: a speech whose first sentence is a long one.
// The sentence cache is off, so every sentence is synthesised; articles go
// one at a time, so that the server is otherwise idle. Figures taken on a
// shared machine are noisy: compare them with the whole rendering of the
// same run.
//
//	go run ./bench/live [-runs 2]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	narr "github.com/narrator/narrator"
	"github.com/narrator/narrator/bench/internal/benchserve"

	gomp3 "github.com/hajimehoshi/go-mp3"

	"github.com/narrator/narrator/internal/hls"
)

func main() {
	runs := flag.Int("runs", 2, "runs of each article")
	flag.Parse()
	if err := run(*runs); err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(1)
	}
}

func run(runs int) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(root, "bench", "testdata", "live", "*.html"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no articles in bench/testdata/live: %v", err)
	}
	sort.Strings(files)
	tmp, err := os.MkdirTemp("", "narrator-live-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "narrator")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "narrator")).CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	n, err := startNarrator(bin, filepath.Join(tmp, "data"), "--cache-mb", "0")
	if err != nil {
		return err
	}
	defer n.Stop()

	fmt.Printf("%-14s %6s %6s %22s %16s %7s %18s %17s %14s %16s %13s\n", "article", "words", "units", "POST→first segment ms",
		"POST→processed ms", "ratio", "speech first byte ms", "speech last byte ms", "first÷live first",
		"body first byte ms", "body÷live first")
	var ratios, bodyRatios []float64
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		words := len(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(string(raw), " ")))
		name := strings.TrimSuffix(filepath.Base(f), ".html")
		for i := range runs {
			m, err := n.measure(fmt.Sprintf("%s-%d", name, i), string(raw))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			sp, err := n.speech(speechInput(string(raw)), "alloy")
			if err != nil {
				return fmt.Errorf("%s: speech: %w", name, err)
			}
			body, err := n.speech(speechInput(leadingHeading.ReplaceAllString(string(raw), "")), "alloy")
			if err != nil {
				return fmt.Errorf("%s: speech of the body: %w", name, err)
			}
			ratio, bodyRatio := sp.first.Seconds()/m.first.Seconds(), body.first.Seconds()/m.first.Seconds()
			ratios, bodyRatios = append(ratios, ratio), append(bodyRatios, bodyRatio)
			fmt.Printf("%-14s %6d %6d %22d %16d %6.1f%% %18d %17d %14.2f %16d %13.2f\n", name, words, m.units,
				m.first.Milliseconds(), m.processed.Milliseconds(), 100*m.first.Seconds()/m.processed.Seconds(),
				sp.first.Milliseconds(), sp.last.Milliseconds(), ratio, body.first.Milliseconds(), bodyRatio)
		}
	}
	for _, r := range []struct {
		what   string
		ratios []float64
	}{{"speech", ratios}, {"body-only speech", bodyRatios}} {
		sort.Float64s(r.ratios)
		fmt.Printf("%s first bytes ÷ live stream's first segment: median %.2f, worst %.2f (of %d)\n",
			r.what, r.ratios[len(r.ratios)/2], r.ratios[len(r.ratios)-1], len(r.ratios))
	}
	return nil
}

// leadingHeading matches the heading an article opens with.
var leadingHeading = regexp.MustCompile(`(?is)^\s*<h[1-6][^>]*>.*?</h[1-6]>`)

// speechInput returns an article's text as a client of the speech
// endpoint would send it: a paragraph a line, tags dropped, spaces folded,
// at most MaxSpeechInput characters, cut after the last full stop that
// fits.
func speechInput(html string) string {
	blocks := regexp.MustCompile(`(?i)</(p|h[1-6]|li|blockquote)>`).ReplaceAllString(html, "\n\n")
	var paras []string
	for _, p := range strings.Split(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(blocks, " "), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			paras = append(paras, p)
		}
	}
	text := strings.Join(paras, "\n\n")
	if r := []rune(text); len(r) > narr.MaxSpeechInput {
		text = string(r[:narr.MaxSpeechInput])
		if i := strings.LastIndex(text, ". "); i > 0 {
			text = text[:i+1]
		}
	}
	return text
}

type speechTimes struct{ first, last time.Duration }

// speech asks the OpenAI convention's endpoint to stream text as MP3 and
// times its first and last audio bytes from the request.
func (n *narrator) speech(text, voice string) (speechTimes, error) {
	var t speechTimes
	body, err := json.Marshal(map[string]any{"model": "tts-1", "input": text, "voice": voice, "response_format": "mp3"})
	if err != nil {
		return t, err
	}
	req, err := http.NewRequest("POST", n.Base+"/v1/audio/speech", bytes.NewReader(body))
	if err != nil {
		return t, err
	}
	req.Header.Set("Authorization", "Bearer "+n.Key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return t, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(res.Body)
		return t, fmt.Errorf("%d %s", res.StatusCode, msg)
	}
	var audio bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		k, err := res.Body.Read(buf)
		if k > 0 && audio.Len() == 0 {
			t.first = time.Since(start)
		}
		audio.Write(buf[:k])
		if err == io.EOF {
			break
		}
		if err != nil {
			return t, err
		}
	}
	t.last = time.Since(start)
	dec, err := gomp3.NewDecoder(&audio)
	if err != nil {
		return t, fmt.Errorf("decode: %w", err)
	}
	if pcm, err := io.ReadAll(dec); err != nil || len(pcm) == 0 {
		return t, fmt.Errorf("decode: %d bytes, %v", len(pcm), err)
	}
	return t, nil
}

type measurement struct {
	first, processed time.Duration
	units            int
}

// measure posts an article, plays its first segment from the live stream
// as soon as the progress extension names it, and waits for processed.
func (n *narrator) measure(ref, body string) (measurement, error) {
	var m measurement
	if _, err := n.Call("POST", fmt.Sprintf("/api/v3/projects/%d/audio", n.Project), map[string]any{"body": body, "external_id": ref}); err != nil {
		return m, err
	}
	acked := time.Now()
	progress := fmt.Sprintf("/api/v3/projects/%d/audio/%s/progress", n.Project, ref)
	for deadline := acked.Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return m, errors.New("no live stream within 2 minutes")
		}
		p, err := n.Call("GET", progress, nil)
		if err != nil {
			return m, err
		}
		live, _ := p["live_url"].(string)
		if live == "" {
			if p["state"] != "unprocessed" {
				return m, fmt.Errorf("audio is %v without a live stream", p["state"])
			}
			continue
		}
		if err := playFirstSegment(live[:strings.LastIndex(live, "/")+1] + hls.SegmentName(0)); err != nil {
			return m, err
		}
		m.first = time.Since(acked)
		if total, ok := p["units_total"].(float64); ok {
			m.units = int(total)
		}
		break
	}
	for deadline := acked.Add(10 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return m, errors.New("not processed within 10 minutes")
		}
		p, err := n.Call("GET", progress, nil)
		if err != nil {
			return m, err
		}
		switch p["state"] {
		case "processed":
			m.processed = time.Since(acked)
			return m, nil
		case "failed":
			return m, errors.New("synthesis failed")
		}
	}
}

// playFirstSegment fetches a segment and decodes its MP3 frames, as a
// player does before the first sound.
func playFirstSegment(url string) error {
	res, err := http.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	ts, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		return fmt.Errorf("fetch %s: %d %v", url, res.StatusCode, err)
	}
	frames, err := hls.SegmentMP3(ts)
	if err != nil {
		return err
	}
	dec, err := gomp3.NewDecoder(bytes.NewReader(frames))
	if err != nil {
		return fmt.Errorf("decode first segment: %w", err)
	}
	pcm, err := io.ReadAll(dec)
	if err != nil || len(pcm) == 0 {
		return fmt.Errorf("decode first segment: %d bytes, %v", len(pcm), err)
	}
	return nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

type narrator struct {
	*benchserve.Server
	logs bytes.Buffer
}

func startNarrator(bin, data string, extra ...string) (*narrator, error) {
	n := &narrator{}
	srv, err := benchserve.Start(bin, data, &n.logs, extra...)
	if err != nil {
		return nil, fmt.Errorf("%w:\n%s", err, n.logs.String())
	}
	n.Server = srv
	return n, nil
}
