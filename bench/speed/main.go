// Command speed measures Narrator end to end on this machine and prints the
// figures, each beside its baseline measured in the same run.
//
// For each article under bench/testdata/speed (news prose no test or cache
// uses, 1,000 words or more) and each run, it reads the article by hand
// with festival's text2wave and lame, then sends it through a fresh
// `narrator serve` (a new data directory, so no cache has seen it) with the
// default voice, and times POST to processed. It prints the ratio, how many
// distinct sentences the article has, and where the CPU time went from POST
// to processed: narrator's own threads, festival, flite and lame, the share
// of all cores they used, and how busy each of the machine's cores was
// (other work included). It ends with an update that changes one sentence
// of bench/testdata/article1000.html, and, with -large, the peak RSS while
// the largest allowed article (100,000 characters) is processed.
//
// With -drain N it instead posts a backlog of N short articles (a title and
// two sentences, all different) to a fresh server, waits until all are
// processed, and prints articles per second and the CPU profile of the run.
//
//	go run ./bench/speed [-runs 1] [-large] [-serve-flags "--jobs 2"] [-bin narrator]
//	go run ./bench/speed -drain 1000
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narrator/narrator/bench/internal/benchserve"

	"github.com/narrator/narrator/internal/speak"
)

func main() {
	runs := flag.Int("runs", 1, "timed runs of each article through each pipeline")
	large := flag.Bool("large", false, "also process a 100,000-character article and report peak RSS")
	drain := flag.Int("drain", 0, "instead, measure how fast a backlog of this many short articles drains")
	serveFlags := flag.String("serve-flags", "", "extra flags for narrator serve, space-separated")
	bin := flag.String("bin", "", "a narrator binary to measure instead of building this tree's (an older build, say)")
	flag.Parse()
	b, err := newBench(*bin, strings.Fields(*serveFlags))
	if err != nil {
		fmt.Fprintln(os.Stderr, "speed:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(b.tmp)
	if *drain > 0 {
		err = b.drain(*drain)
	} else {
		err = b.run(*runs, *large)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "speed:", err)
		os.Exit(1)
	}
}

type bench struct {
	root, tmp, bin string
	serveFlags     []string
	servers        int
}

func newBench(prebuilt string, serveFlags []string) (*bench, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "narrator-bench-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(tmp, "narrator")
	if prebuilt != "" {
		return &bench{root: root, tmp: tmp, bin: prebuilt, serveFlags: serveFlags}, nil
	}
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "narrator")).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("build: %v\n%s", err, out)
	}
	return &bench{root: root, tmp: tmp, bin: bin, serveFlags: serveFlags}, nil
}

// fresh starts narrator serve on a data directory of its own.
func (b *bench) fresh(extra ...string) (*narrator, error) {
	b.servers++
	return startNarrator(b.bin, filepath.Join(b.tmp, fmt.Sprintf("data%d", b.servers)), append(extra, b.serveFlags...)...)
}

// plainText is an article's HTML as the plain text a person would give
// text2wave.
func plainText(html string) string {
	return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(html, " ")), " ")
}

// titleOf is the text of an article's first heading.
func titleOf(html string) string {
	if m := regexp.MustCompile(`(?s)<h1>(.*?)</h1>`).FindStringSubmatch(html); m != nil {
		return m[1]
	}
	return ""
}

// sentences counts an article's units as Narrator reads it, and the
// distinct ones among them.
func sentences(title, html string) (units, distinct int) {
	us := speak.Script("en_US", title, "", html, nil)
	seen := map[string]bool{}
	for _, u := range us {
		seen[u.Text] = true
	}
	return len(us), len(seen)
}

// run times each article of bench/testdata/speed runs times, by hand and by narrator, and
// then an update (runUpdate).
func (b *bench) run(runs int, large bool) error {
	paths, err := filepath.Glob(filepath.Join(b.root, "bench", "testdata", "speed", "*.html"))
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no articles under bench/testdata/speed")
	}
	fmt.Printf("%d articles, %d runs each; load average at start %s\n", len(paths), runs, loadAvg())
	var (
		ratios               []float64
		sumHand, sumNar      time.Duration
		handCPU, narratorCPU time.Duration
	)
	for r := range runs {
		for _, path := range paths {
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			html, name := string(raw), strings.TrimSuffix(filepath.Base(path), ".html")
			plain := plainText(html)
			title := titleOf(html)
			units, distinct := sentences(title, html)
			if r == 0 {
				fmt.Printf("\n%s: %d words, %d units read, %d distinct sentences\n", name, len(strings.Fields(plain)), units, distinct)
			}
			hand, err := timeByHand(b.tmp, plain)
			if err != nil {
				return err
			}
			n, err := b.fresh()
			if err != nil {
				return err
			}
			d, prof, err := n.timeCreate(name, title, html)
			n.Stop()
			if err != nil {
				return err
			}
			ratio := hand.wall.Seconds() / d.Seconds()
			ratios = append(ratios, ratio)
			sumHand += hand.wall
			sumNar += d
			fmt.Printf("  run %d, load %s: by hand %.2f s (text2wave CPU %.2f s, lame CPU %.2f s); narrator %.2f s; %.2fx\n",
				r+1, loadAvg(), hand.wall.Seconds(), hand.synth.Seconds(), hand.lame.Seconds(), d.Seconds(), ratio)
			fmt.Printf("    %s\n", prof)
			handCPU += hand.synth + hand.lame
			narratorCPU += prof.total()
			fmt.Printf("    CPU by hand %.2f s, narrator %.2f s: at full use of %d idle cores, at most %.2fx\n",
				(hand.synth + hand.lame).Seconds(), prof.total().Seconds(), runtime.NumCPU(),
				float64(runtime.NumCPU())*(hand.synth+hand.lame).Seconds()/prof.total().Seconds())
		}
	}
	fmt.Printf("\nall articles: by hand %.2f s, narrator %.2f s: %.2fx (median of the ratios %.2fx)\n",
		sumHand.Seconds(), sumNar.Seconds(), sumHand.Seconds()/sumNar.Seconds(), medianF(ratios))
	fmt.Printf("all articles, CPU: by hand %.2f s, narrator %.2f s: at full use of %d idle cores, at most %.2fx\n",
		handCPU.Seconds(), narratorCPU.Seconds(), runtime.NumCPU(), float64(runtime.NumCPU())*handCPU.Seconds()/narratorCPU.Seconds())

	return b.runUpdate(large)
}

// runUpdate times an update that changes one sentence, with the cache on, and then, if
// large, the largest allowed article with the cache off.
func (b *bench) runUpdate(large bool) error {
	raw, err := os.ReadFile(filepath.Join(b.root, "bench", "testdata", "article1000.html"))
	if err != nil {
		return err
	}
	article := string(raw)
	warm, err := b.fresh()
	if err != nil {
		return err
	}
	defer warm.Stop()
	first, _, err := warm.timeCreate("update", "Bench update", article)
	if err != nil {
		return err
	}
	changed := strings.Replace(article, "Nearly six hundred people came to watch.", "Nearly seven hundred people came to watch.", 1)
	upd, err := warm.timeUpdate("update", changed)
	if err != nil {
		return err
	}
	fmt.Printf("update changing one sentence: %.2f s (first rendering %.2f s)\n", upd.Seconds(), first.Seconds())
	if large {
		cold, err := b.fresh("--cache-mb", "0")
		if err != nil {
			return err
		}
		defer cold.Stop()
		return measureLarge(cold, article)
	}
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
	d, prof, err := n.timeCreate("large", "Bench large", body)
	if err != nil {
		return err
	}
	fmt.Printf("100,000-character article (%d characters): %.1f s; peak RSS of narrator serve %d MiB, of its engine processes %d MiB\n",
		len([]rune(body)), d.Seconds(), procStatus(n.Cmd.Process.Pid, "VmHWM:")>>20, prof.peakRSS>>20)
	return nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", errors.New("run from inside the narrator module")
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// handTimes is a reading by hand: its wall time and the CPU time of each
// command.
type handTimes struct{ wall, synth, lame time.Duration }

func timeByHand(dir, text string) (handTimes, error) {
	txt := filepath.Join(dir, "hand.txt")
	wav := filepath.Join(dir, "hand.wav")
	mp3 := filepath.Join(dir, "hand.mp3")
	if err := os.WriteFile(txt, []byte(text), 0o600); err != nil {
		return handTimes{}, err
	}
	cpu := func(c *exec.Cmd) time.Duration { return c.ProcessState.UserTime() + c.ProcessState.SystemTime() }
	start := time.Now()
	t2w := exec.Command("text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", txt, "-o", wav)
	if out, err := t2w.CombinedOutput(); err != nil {
		return handTimes{}, fmt.Errorf("text2wave: %v\n%s", err, out)
	}
	lame := exec.Command("lame", "--quiet", "-m", "m", "-b", "64", wav, mp3)
	if out, err := lame.CombinedOutput(); err != nil {
		return handTimes{}, fmt.Errorf("lame: %v\n%s", err, out)
	}
	return handTimes{wall: time.Since(start), synth: cpu(t2w), lame: cpu(lame)}, nil
}

type narrator struct {
	*benchserve.Server
	logs *logWatch
}

// logWatch keeps narrator serve's log and notes when each audio was
// processed, as the log says the moment it is published: waiting on it
// costs the server nothing, where polling the API every few milliseconds
// would cost it CPU that the profile would count. The moment is the
// line's own time, to the millisecond, not when the line arrives: serve
// writes its log out in batches.
type logWatch struct {
	mu        sync.Mutex
	text      bytes.Buffer
	partial   []byte
	processed map[int64][]time.Time // by audio ID, each rendering published
	failed    map[int64]bool
}

var (
	reAudioID = regexp.MustCompile(` audio_id=(\d+) `)
	reTime    = regexp.MustCompile(`^time=(\S+) `)
)

// lineTime is the time a log line of narrator serve gives, else now.
func lineTime(line string, now time.Time) time.Time {
	if m := reTime.FindStringSubmatch(line); m != nil {
		if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			return t
		}
	}
	return now
}

func (l *logWatch) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		m := reAudioID.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		switch {
		case strings.Contains(line, `msg="audio processed"`):
			l.processed[id] = append(l.processed[id], lineTime(line, now))
		case strings.Contains(line, `msg="synthesis failed for good"`):
			l.failed[id] = true
		}
	}
	return len(p), nil
}

// renderings returns when each rendering of an audio was published, and
// whether the audio failed for good.
func (l *logWatch) renderings(id int64) ([]time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.processed[id]...), l.failed[id]
}

// count is how many audios have been processed at least once.
func (l *logWatch) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.processed)
}

// failures is how many audios failed for good.
func (l *logWatch) failures() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.failed)
}

func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

func startNarrator(bin, data string, extra ...string) (*narrator, error) {
	n := &narrator{logs: &logWatch{processed: map[int64][]time.Time{}, failed: map[int64]bool{}}}
	srv, err := benchserve.Start(bin, data, n.logs, extra...)
	if err != nil {
		return nil, fmt.Errorf("%w:\n%s", err, n.logs)
	}
	n.Server = srv
	return n, nil
}

// timeCreate posts an audio and returns the time until it is processed,
// with the CPU profile of narrator and its engines meanwhile.
func (n *narrator) timeCreate(ref, title, body string) (time.Duration, profile, error) {
	s := newSampler(n.Server)
	s.Start()
	start := time.Now()
	a, err := n.Call("POST", fmt.Sprintf("/api/v3/projects/%d/audio", n.Project), map[string]any{"body": body, "title": title, "external_id": ref})
	if err != nil {
		s.Stop()
		return 0, profile{}, err
	}
	d, err := n.wait(int64(a["id"].(float64)), 1, start)
	return d, s.Stop(), err
}

// timeUpdate changes an audio's body and returns the time until its second
// rendering is processed.
func (n *narrator) timeUpdate(ref, body string) (time.Duration, error) {
	start := time.Now()
	a, err := n.Call("PUT", fmt.Sprintf("/api/v3/projects/%d/audio/%s", n.Project, ref), map[string]any{"body": body})
	if err != nil {
		return 0, err
	}
	return n.wait(int64(a["id"].(float64)), 2, start)
}

// wait waits until the log says the nth rendering of an audio was
// published, checks with the API that it is processed, and returns the
// time from start to publication.
func (n *narrator) wait(id int64, nth int, start time.Time) (time.Duration, error) {
	for time.Since(start) < 15*time.Minute {
		done, failed := n.logs.renderings(id)
		switch {
		case failed:
			return 0, fmt.Errorf("audio %d failed:\n%s", id, n.logs)
		case len(done) >= nth:
			a, err := n.Call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%d", n.Project, id), nil)
			if err != nil {
				return 0, err
			}
			if a["state"] != "processed" {
				return 0, fmt.Errorf("audio %d: the log says processed, the API %v", id, a["state"])
			}
			return done[nth-1].Sub(start), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, errors.New("not processed within 15 minutes")
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

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
