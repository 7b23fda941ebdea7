package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/narrator/narrator/bench/internal/benchserve"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// timingsCompute is the matrix products each inference run of -timings makes (about 1.7
// GFLOP), so that a run costs what a short sentence of a real voice does, not the worker's
// round trip alone.
const timingsCompute = 50

// runTimings measures word timings' cost, for Piper and then Kokoro: the pipeline's CPU per
// audio second with them and without, then the inference time of the model that gives its
// durations against the one that does not.
func runTimings(nArticles, rounds, runs int) error {
	dir, bin, lib, err := prepare()
	defer os.RemoveAll(dir)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile("internal/neural/testdata/en_US-test.onnx.json")
	if err != nil {
		return err
	}
	paths, err := filepath.Glob("bench/testdata/speed/*.html")
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no articles under bench/testdata/speed: %v", err)
	}
	paths = paths[:min(nArticles, len(paths))]
	b := timingsBench{dir: dir, bin: bin, lib: lib, paths: paths, rounds: max(rounds, 1)}

	// Piper: the same tone voice, with word timings (one Ceil node, patched at install) and
	// without (two, so not alignable; the same frames, so the same audio).
	piper := func(ceils int) voiceFiles {
		return func(vdir string) ([]string, error) {
			model := filepath.Join(vdir, "en_US-tone-medium.onnx")
			if err := os.WriteFile(model, onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: ceils}), 0o600); err != nil {
				return nil, err
			}
			return []string{"--gender", "female", model}, os.WriteFile(model+".json", cfg, 0o600)
		}
	}
	if err := b.pipeline("piper", piper(2), piper(1)); err != nil {
		return err
	}
	// Inference: the same model, as the operator gave it and patched.
	plain := onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1, Compute: timingsCompute})
	patched, _, err := neural.MarkDurations(plain)
	if err != nil {
		return err
	}
	ids := make([]int64, 120) // a sentence of about 60 phonemes, with their pads
	for i := range ids {
		ids[i] = int64(i*7) % 100
	}
	pin := worker.PiperInput{IDs: ids, NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8}
	if err := b.inference("piper: patched", [2][]byte{plain, patched}, runs, len(ids), func(p *worker.Pool) ([]float32, error) {
		_, frames, err := p.PiperFrames(context.Background(), pin, time.Minute)
		return frames, err
	}); err != nil {
		return err
	}

	// Kokoro: the same model, a timestamped export (durations as an output) and one without.
	kokoro := func(o onnxtest.KokoroTimedOptions) voiceFiles {
		return func(vdir string) ([]string, error) {
			model, styles := filepath.Join(vdir, "kokoro-v1.0.onnx"), filepath.Join(vdir, "af_heart.bin")
			if err := os.WriteFile(model, onnxtest.KokoroTimed(o), 0o600); err != nil {
				return nil, err
			}
			return []string{model, styles}, os.WriteFile(styles, make([]byte, 4*neural.StyleRows*worker.StyleSize), 0o600)
		}
	}
	if err := b.pipeline("kokoro", kokoro(onnxtest.KokoroTimedOptions{NoDurations: true}), kokoro(onnxtest.KokoroTimedOptions{})); err != nil {
		return err
	}
	tokens := slices.Concat([]int64{0}, ids[1:len(ids)-1], []int64{0})
	kin := worker.KokoroInput{Tokens: tokens, Style: make([]float32, worker.StyleSize), Speed: 1}
	timed := func(o onnxtest.KokoroTimedOptions) []byte {
		o.Compute = timingsCompute
		return onnxtest.KokoroTimed(o)
	}
	return b.inference("kokoro: with durations", [2][]byte{timed(onnxtest.KokoroTimedOptions{NoDurations: true}), timed(onnxtest.KokoroTimedOptions{})}, runs, len(tokens), func(p *worker.Pool) ([]float32, error) {
		_, frames, err := p.KokoroFrames(context.Background(), kin, time.Minute)
		return frames, err
	})
}

// voiceFiles writes a voice's files into a directory and returns the arguments of voices
// install that install them.
type voiceFiles func(dir string) ([]string, error)

// timingsBench is one run of -timings.
type timingsBench struct {
	dir, bin, lib string
	paths         []string // the articles
	rounds        int      // how many times each server narrates each article
}

// pipeline installs the voice that without writes and the one that with writes, each as its
// language's default in a fresh server, and narrates each article with both, b.rounds
// times, alternating which goes first so that a change in the machine's load falls on both
// alike; it prints the CPU per audio second of each and their ratio.
func (b timingsBench) pipeline(engine string, without, with voiceFiles) error {
	names := [2]string{"sentence timings", "word timings"}
	var servers [2]*benchserve.Server
	var logs [2]bytes.Buffer
	for i, files := range []voiceFiles{without, with} {
		vdir := filepath.Join(b.dir, fmt.Sprintf("%s-voice-%d", engine, i))
		if err := os.MkdirAll(vdir, 0o700); err != nil {
			return err
		}
		args, err := files(vdir)
		if err != nil {
			return err
		}
		data := filepath.Join(b.dir, fmt.Sprintf("%s-data-%d", engine, i))
		args = append([]string{"voices", "install", "--data", data, "--onnxruntime", b.lib, "--priority", "1", "--json"}, args...)
		if out, err := exec.Command(b.bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("voices install: %v\n%s", err, out)
		}
		// No cache of spoken sentences: every round speaks every sentence again.
		if servers[i], err = benchserve.Start(b.bin, data, &logs[i], "--onnxruntime", b.lib, "--cache-mb", "0"); err != nil {
			return fmt.Errorf("%w\n%s", err, logs[i].String())
		}
		defer servers[i].Stop()
	}
	var results []result
	var perAudio [2][2]float64 // pipeline CPU s, audio s
	for k := range b.rounds * len(b.paths) {
		p := b.paths[k%len(b.paths)]
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, i := range [][2]int{{0, 1}, {1, 0}}[(k+k/len(b.paths))%2] {
			r, err := narrate(servers[i], b.bin, filepath.Base(p), string(raw), false)
			if err != nil {
				return fmt.Errorf("%s with %s %s: %w\n%s", filepath.Base(p), engine, names[i], err, logs[i].String())
			}
			r.voice = engine + ", " + names[i]
			results = append(results, r)
			perAudio[i][0] += (r.cpu - r.modelCPU).Seconds()
			perAudio[i][1] += r.audio.Seconds()
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "article\ttimings\taudio s\tCPU s per audio s\tmodel\tpipeline\t")
	for _, r := range results {
		a := r.audio.Seconds()
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.4f\t%.4f\t%.4f\t\n", r.article, r.voice, a, r.cpu.Seconds()/a, r.modelCPU.Seconds()/a, (r.cpu-r.modelCPU).Seconds()/a)
	}
	tw.Flush()
	wo, w := perAudio[0][0]/perAudio[0][1], perAudio[1][0]/perAudio[1][1]
	fmt.Printf("%s: pipeline CPU per audio second: %.4f with word timings, %.4f without: %.3f×\n", engine, w, wo, w/wo)
	return nil
}

// inference runs models[0] (no durations) and models[1] (durations) in turn, each by its own
// worker, with run, which returns the durations, runs times after 5 to warm up, checks that
// only the second gives n durations, and prints the median times and their ratio.
func (b timingsBench) inference(label string, models [2][]byte, runs, n int, run func(*worker.Pool) ([]float32, error)) error {
	pools := make([]*worker.Pool, 2)
	for i, m := range models {
		path := filepath.Join(b.dir, fmt.Sprintf("model-%s-%d.onnx", strings.TrimSuffix(strings.Fields(label)[0], ":"), i))
		if err := os.WriteFile(path, m, 0o600); err != nil {
			return err
		}
		var err error
		if pools[i], err = worker.New(worker.Config{Command: []string{b.bin, "onnx-worker"}, Library: b.lib, Model: path}); err != nil {
			return err
		}
		defer pools[i].Close()
	}
	took := [2][]time.Duration{}
	for k := -5; k < runs; k++ {
		for i, p := range pools {
			start := time.Now()
			frames, err := run(p)
			if err != nil {
				return err
			}
			if (i == 1) != (len(frames) == n) {
				return fmt.Errorf("%s: model %d gave %d durations for %d inputs", label, i, len(frames), n)
			}
			if k >= 0 {
				took[i] = append(took[i], time.Since(start))
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	a, c := median(took[0]), median(took[1])
	fmt.Printf("%s against not, inference, median of %d runs each: %.2f ms against %.2f ms: %.3f×\n", label, runs, c.Seconds()*1000, a.Seconds()*1000, c.Seconds()/a.Seconds())
	return nil
}
