// Command neural measures a neural voice through `narrator serve`, beside festival's HTS voice
// (the best built-in one) on the same texts in the same run.
//
// Each article under bench/testdata/speed (news prose that no test uses) is narrated by two
// fresh servers: one speaking with festival, one with the neural voice, installed with
// `narrator voices install` and made the default. For each it prints the audio's length, the
// time from POST to processed, their ratio (the real-time factor), and the CPU time per
// second of audio, split into the model's (the onnx-worker processes) and the rest: the
// pipeline's own cost of normalising, phonemising, levelling and encoding. It ends with each
// server's peak RSS (VmHWM: the server process alone) and the workers'.
//
// Without -model it speaks with a generated tiny Piper model (internal/onnx/onnxtest) whose
// runs cost almost nothing, so that the figures are the pipeline's own; with -model, a real
// Piper voice (MODEL.onnx beside MODEL.onnx.json), and -score also rates each MP3's
// intelligibility with scripts/intelligibility.py (pocketsphinx, English only).
//
//	go run ./bench/neural [-model VOICE.onnx -gender female] [-score] [-articles N]
//	bench/voice.sh VOICE.onnx     (the same, with -score)
//
// With -timings it measures the cost of word timings instead, in one run, for Piper and then
// Kokoro: the same articles narrated by two servers, one with a generated tone voice that
// gives its durations (word timings), one with the same voice without them (sentence
// timings, the same audio: for Piper a second, no-op Ceil node makes it unalignable; for
// Kokoro the durations are not an output), and their ratio of the pipeline's CPU per audio
// second; then the model's inference time with durations against without (Piper: patched by
// neural.MarkDurations against unpatched), in runs that alternate between the two on the
// same sentence.
//
//	go run ./bench/neural -timings [-articles N] [-rounds N] [-runs N]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/narrator/narrator/bench/internal/benchserve"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
)

func main() {
	model := flag.String("model", "", "a real Piper voice's .onnx, with its .onnx.json beside it (default: a generated tiny model)")
	gender := flag.String("gender", "female", "the real voice's gender, which its files do not say")
	score := flag.Bool("score", false, "also score each MP3's intelligibility with pocketsphinx (scripts/intelligibility.py)")
	articles := flag.Int("articles", 3, "how many of bench/testdata/speed's articles to narrate")
	timings := flag.Bool("timings", false, "measure the cost of word timings instead (see the package comment)")
	runs := flag.Int("runs", 200, "with -timings, how many inference runs of each model")
	rounds := flag.Int("rounds", 1, "with -timings, how many times each server narrates each article")
	flag.Parse()
	var err error
	if *timings {
		err = runTimings(*articles, *rounds, *runs)
	} else {
		err = run(*model, *gender, *score, *articles)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "neural:", err)
		os.Exit(1)
	}
}

// result is one article narrated by one voice.
type result struct {
	article, voice string
	audio, wall    time.Duration
	cpu, modelCPU  time.Duration
	accuracy       string
}

// prepare builds narrator and its phonemiser's helper into a new directory, which the caller
// removes, and finds onnxruntime.
func prepare() (dir, bin, lib string, err error) {
	if dir, err = os.MkdirTemp("", "narrator-bench-neural-"); err != nil {
		return "", "", "", err
	}
	bin = filepath.Join(dir, "narrator")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/narrator").CombinedOutput(); err != nil {
		return dir, "", "", fmt.Errorf("build narrator: %v\n%s", err, out)
	}
	if out, err := exec.Command("cc", "-O2", "-o", filepath.Join(dir, "narrator-espeak"), "internal/phonemize/helper/narrator-espeak.c", "-lespeak-ng").CombinedOutput(); err != nil {
		return dir, "", "", fmt.Errorf("build narrator-espeak: %v\n%s", err, out)
	}
	lib = os.Getenv("NARRATOR_ONNXRUNTIME")
	if lib == "" {
		out, err := exec.Command("scripts/deps.sh", "onnxruntime").Output()
		if err != nil {
			return dir, "", "", fmt.Errorf("scripts/deps.sh onnxruntime: %w", err)
		}
		lib = strings.TrimSpace(string(out))
	}
	return dir, bin, lib, nil
}

func run(model, gender string, score bool, nArticles int) error {
	dir, bin, lib, err := prepare()
	defer os.RemoveAll(dir)
	if err != nil {
		return err
	}
	name := "tiny (generated)"
	if model == "" {
		// A tiny paced Piper model: each phoneme ID lasts 30 ms, so a phoneme and its pad
		// last 60 ms, about the pace of speech.
		model = filepath.Join(dir, "en_US-tiny-medium.onnx")
		if err := os.WriteFile(model, onnxtest.Piper(onnxtest.PiperOptions{Repeat: 661, Paced: true}), 0o600); err != nil {
			return err
		}
		cfg, err := os.ReadFile("internal/neural/testdata/en_US-test.onnx.json")
		if err != nil {
			return err
		}
		if err := os.WriteFile(model+".json", cfg, 0o600); err != nil {
			return err
		}
	} else {
		name = filepath.Base(model)
	}
	paths, err := filepath.Glob("bench/testdata/speed/*.html")
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no articles under bench/testdata/speed: %v", err)
	}
	paths = paths[:min(nArticles, len(paths))]

	var results []result
	var rss []string
	for _, neural := range []bool{false, true} {
		data := filepath.Join(dir, fmt.Sprintf("data-%v", neural))
		voice := "festival (Sally)"
		if neural {
			voice = "neural: " + name
			out, err := exec.Command(bin, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", gender, "--priority", "1", "--json", model).CombinedOutput()
			if err != nil {
				return fmt.Errorf("voices install: %v\n%s", err, out)
			}
		}
		var logs bytes.Buffer
		srv, err := benchserve.Start(bin, data, &logs, "--onnxruntime", lib)
		if err != nil {
			return fmt.Errorf("%w\n%s", err, logs.String())
		}
		for _, p := range paths {
			raw, err := os.ReadFile(p)
			if err != nil {
				srv.Stop()
				return err
			}
			r, err := narrate(srv, bin, filepath.Base(p), string(raw), score)
			if err != nil {
				srv.Stop()
				return fmt.Errorf("%s with %s: %w\n%s", filepath.Base(p), voice, err, logs.String())
			}
			r.voice = voice
			results = append(results, r)
		}
		server, workers := kib(srv.Cmd.Process.Pid, "VmHWM"), workerPeak(bin)
		rss = append(rss, fmt.Sprintf("%s: server %.1f MiB peak RSS, onnx workers %.1f MiB", voice, float64(server)/1024, float64(workers)/1024))
		srv.Stop()
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "article\tvoice\taudio s\tPOST→processed s\treal-time factor\tCPU s per audio s\tmodel\tpipeline\tintelligibility\t")
	for _, r := range results {
		a := r.audio.Seconds()
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", r.article, r.voice, a, r.wall.Seconds(), r.wall.Seconds()/a,
			r.cpu.Seconds()/a, r.modelCPU.Seconds()/a, (r.cpu-r.modelCPU).Seconds()/a, r.accuracy)
	}
	tw.Flush()
	for _, line := range rss {
		fmt.Println(line)
	}
	return nil
}

// narrate posts an article, waits until it is processed, and measures it.
func narrate(srv *benchserve.Server, bin, article, body string, score bool) (result, error) {
	r := result{article: article}
	cpu0, _ := srv.CPU()
	model0 := workerCPU(bin)
	start := time.Now()
	ref := fmt.Sprintf("bench-%d", start.UnixNano())
	if _, err := srv.Call("POST", fmt.Sprintf("/api/v3/projects/%d/audio", srv.Project), map[string]any{"title": strings.TrimSuffix(article, ".html"), "body": body, "external_id": ref}); err != nil {
		return r, err
	}
	for {
		a, err := srv.Call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s", srv.Project, ref), nil)
		if err != nil {
			return r, err
		}
		if a["state"] == "processed" {
			break
		}
		if a["state"] == "failed" {
			return r, fmt.Errorf("failed: %v", a["error"])
		}
		if time.Since(start) > 20*time.Minute {
			return r, fmt.Errorf("not processed within 20 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.wall = time.Since(start)
	cpu1, ok := srv.CPU()
	if ok {
		r.cpu = cpu1 - cpu0
	}
	r.modelCPU = workerCPU(bin) - model0
	tr, err := srv.Call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s/transcript", srv.Project, ref), nil)
	if err != nil {
		return r, err
	}
	r.audio = time.Duration(tr["duration"].(float64) * float64(time.Second))
	r.accuracy = "-"
	if score {
		if r.accuracy, err = intelligibility(srv, ref, tr); err != nil {
			return r, err
		}
	}
	return r, nil
}

// intelligibility scores an audio's MP3 against its transcript's sentences.
func intelligibility(srv *benchserve.Server, ref string, tr map[string]any) (string, error) {
	a, err := srv.Call("GET", fmt.Sprintf("/api/v3/projects/%d/audio/%s", srv.Project, ref), nil)
	if err != nil {
		return "", err
	}
	var mp3 string
	for _, m := range a["media"].([]any) {
		if mm := m.(map[string]any); mm["content_type"] == "audio/mpeg" {
			mp3 = mm["url"].(string)
		}
	}
	res, err := http.Get(mp3)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	dir, err := os.MkdirTemp("", "narrator-score-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	audio, text := filepath.Join(dir, "audio.mp3"), filepath.Join(dir, "spoken.txt")
	f, err := os.Create(audio)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return "", err
	}
	f.Close()
	var words []string
	for _, s := range tr["sentences"].([]any) {
		words = append(words, s.(map[string]any)["text"].(string))
	}
	if err := os.WriteFile(text, []byte(strings.Join(words, "\n")), 0o600); err != nil {
		return "", err
	}
	out, err := exec.Command("python3", "scripts/intelligibility.py", audio, text).Output()
	if err != nil {
		return "", fmt.Errorf("scripts/intelligibility.py: %w", err)
	}
	for _, field := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(field, "accuracy="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("scripts/intelligibility.py said %q", out)
}

// workers returns the process IDs of bin's onnx-worker processes.
func workers(bin string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[0] == bin && args[1] == "onnx-worker" {
			out = append(out, pid)
		}
	}
	return out
}

// workerCPU is the CPU time bin's live onnx-worker processes have used.
func workerCPU(bin string) time.Duration {
	var sum time.Duration
	for _, pid := range workers(bin) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: utime and stime are the 12th
		// and 13th, in clock ticks of 100 Hz.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.Atoi(f[11])
			s, _ := strconv.Atoi(f[12])
			sum += time.Duration(u+s) * 10 * time.Millisecond
		}
	}
	return sum
}

// workerPeak is the summed peak RSS of bin's live onnx-worker processes, in KiB.
func workerPeak(bin string) int {
	sum := 0
	for _, pid := range workers(bin) {
		sum += kib(pid, "VmHWM")
	}
	return sum
}

// kib returns a field of /proc/PID/status in KiB.
func kib(pid int, field string) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
