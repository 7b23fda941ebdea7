// Command speed measures Narrator end to end on this machine and prints the
// figures: seconds per 1,000-word article through `narrator serve` (from
// POST to processed), the same article read by hand with the engine's
// command line and lame, their ratio, the time of an update that changes one
// sentence, and, with -large, the peak RSS while the largest allowed article
// (100,000 characters) is processed.
//
//	go run ./bench/speed [-runs 3] [-large]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 3, "timed runs of each pipeline")
	large := flag.Bool("large", false, "also process a 100,000-character article and report peak RSS")
	flag.Parse()
	if err := run(*runs, *large); err != nil {
		fmt.Fprintln(os.Stderr, "speed:", err)
		os.Exit(1)
	}
}

func run(runs int, large bool) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	article, err := os.ReadFile(filepath.Join(root, "bench", "testdata", "article1000.html"))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "narrator-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "narrator")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "narrator")).CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	plain := strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(string(article), " ")), " ")
	fmt.Printf("article: %d words, %d characters; %d runs each\n", len(strings.Fields(plain)), len(plain), runs)

	// By hand: festival's command line, then lame, as a person would do it.
	var byHand []time.Duration
	for range runs {
		d, err := timeByHand(tmp, plain)
		if err != nil {
			return err
		}
		byHand = append(byHand, d)
	}

	// Through narrator serve, with the sentence cache off so every run
	// synthesises everything.
	cold, err := startNarrator(bin, filepath.Join(tmp, "cold"), "--cache-mb", "0")
	if err != nil {
		return err
	}
	var served []time.Duration
	for i := range runs {
		d, _, err := cold.timeCreate(fmt.Sprintf("bench-%d", i), string(article))
		if err != nil {
			cold.stop()
			return err
		}
		served = append(served, d)
	}
	if large {
		if err := measureLarge(cold, string(article)); err != nil {
			cold.stop()
			return err
		}
	}
	cold.stop()

	fmt.Printf("by hand (text2wave + lame):      %s per article\n", summary(byHand))
	fmt.Printf("narrator serve (POST→processed): %s per article\n", summary(served))
	fmt.Printf("speed-up: %.2fx (median by hand / median narrator)\n", median(byHand).Seconds()/median(served).Seconds())

	// An update that changes one sentence, with the cache on.
	warm, err := startNarrator(bin, filepath.Join(tmp, "warm"))
	if err != nil {
		return err
	}
	defer warm.stop()
	first, _, err := warm.timeCreate("update", string(article))
	if err != nil {
		return err
	}
	changed := strings.Replace(string(article), "Nearly six hundred people came to watch.", "Nearly seven hundred people came to watch.", 1)
	upd, err := warm.timeUpdate("update", changed)
	if err != nil {
		return err
	}
	fmt.Printf("update changing one sentence: %.2f s (first rendering %.2f s)\n", upd.Seconds(), first.Seconds())

	return nil
}

// measureLarge processes the largest allowed article, made of the test
// article over and over, with the sentence cache off, and reports its time
// and peak memory.
func measureLarge(n *narrator, article string) error {
	var big strings.Builder
	for i := 0; big.Len() < 99_000; i++ {
		fmt.Fprintf(&big, "<p>Part %d.</p>\n%s\n", i+1, article)
	}
	body := big.String()
	if len(body) > 100_000 {
		body = body[:strings.LastIndex(body[:100_000], "</p>")+4]
	}
	d, rss, err := n.timeCreate("large", body)
	if err != nil {
		return err
	}
	fmt.Printf("100,000-character article (%d characters): %.1f s; peak RSS of narrator serve %d MiB, of its engine processes %d MiB\n",
		len([]rune(body)), d.Seconds(), rss.server>>20, rss.engines>>20)
	return nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", errors.New("run from inside the narrator module")
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

func timeByHand(dir, text string) (time.Duration, error) {
	txt := filepath.Join(dir, "hand.txt")
	wav := filepath.Join(dir, "hand.wav")
	mp3 := filepath.Join(dir, "hand.mp3")
	if err := os.WriteFile(txt, []byte(text), 0o600); err != nil {
		return 0, err
	}
	start := time.Now()
	if out, err := exec.Command("text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", txt, "-o", wav).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("text2wave: %v\n%s", err, out)
	}
	if out, err := exec.Command("lame", "--quiet", "-m", "m", "-b", "64", wav, mp3).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("lame: %v\n%s", err, out)
	}
	return time.Since(start), nil
}

type narrator struct {
	cmd     *exec.Cmd
	base    string
	key     string
	project int64
	logs    bytes.Buffer
}

func startNarrator(bin, data string, extra ...string) (*narrator, error) {
	out, err := exec.Command(bin, "accounts", "create", "--data", data, "--name", "Bench").Output()
	if err != nil {
		return nil, fmt.Errorf("accounts create: %w", err)
	}
	var acct struct {
		ID     int64  `json:"id"`
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(out, &acct); err != nil {
		return nil, err
	}
	out, err = exec.Command(bin, "projects", "create", "--data", data, "--account", strconv.FormatInt(acct.ID, 10), "--title", "Bench", "--language", "en_US").Output()
	if err != nil {
		return nil, fmt.Errorf("projects create: %w", err)
	}
	var proj struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(out, &proj); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &narrator{base: "http://" + addr, key: acct.APIKey, project: proj.ID}
	n.cmd = exec.Command(bin, append([]string{"serve", "--data", data, "--addr", addr}, extra...)...)
	n.cmd.Stderr = &n.logs
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(n.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return n, nil
			}
		}
	}
	n.stop()
	return nil, fmt.Errorf("narrator did not start:\n%s", n.logs.String())
}

func (n *narrator) stop() {
	n.cmd.Process.Signal(os.Interrupt)
	n.cmd.Wait()
}

func (n *narrator) call(method, path string, body map[string]any) (map[string]any, error) {
	body["api_key"] = n.key
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(context.Background(), method, n.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	var m map[string]any
	return m, json.Unmarshal(out, &m)
}

// rss is peak resident memory in bytes.
type rss struct{ server, engines int64 }

func (n *narrator) timeCreate(ref, body string) (time.Duration, rss, error) {
	start := time.Now()
	if _, err := n.call("POST", fmt.Sprintf("/api/v3/projects/%d/audio", n.project), map[string]any{"body": body, "title": "Bench " + ref, "external_id": ref}); err != nil {
		return 0, rss{}, err
	}
	return n.wait(ref, start)
}

func (n *narrator) timeUpdate(ref, body string) (time.Duration, error) {
	start := time.Now()
	if _, err := n.call("PUT", fmt.Sprintf("/api/v3/projects/%d/audio/%s", n.project, ref), map[string]any{"body": body}); err != nil {
		return 0, err
	}
	d, _, err := n.wait(ref, start)
	return d, err
}

// wait polls until the audio is processed, sampling memory meanwhile.
func (n *narrator) wait(ref string, start time.Time) (time.Duration, rss, error) {
	var peak rss
	for time.Since(start) < 15*time.Minute {
		a, err := n.call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s", n.project, ref), map[string]any{})
		if err != nil {
			return 0, peak, err
		}
		switch a["state"] {
		case "processed":
			peak.server = max(peak.server, procStatus(n.cmd.Process.Pid, "VmHWM:"))
			return time.Since(start), peak, nil
		case "failed":
			return 0, peak, fmt.Errorf("audio failed: %v", a["error"])
		}
		var engines int64
		for _, pid := range children(n.cmd.Process.Pid) {
			engines += procStatus(pid, "VmRSS:")
		}
		peak.engines = max(peak.engines, engines)
		time.Sleep(20 * time.Millisecond)
	}
	return 0, peak, errors.New("not processed within 15 minutes")
}

// procStatus reads a kB field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// children lists the direct children of a process, from /proc/*/stat.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces: the
		// parent's pid is the second field after it.
		rest := string(raw[strings.LastIndexByte(string(raw), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		if c, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
			out = append(out, c)
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func summary(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return fmt.Sprintf("median %.2f s (runs: %s s)", median(ds).Seconds(), strings.Join(parts, ", "))
}
