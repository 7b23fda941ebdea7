package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// runTimings measures word timings' cost: the pipeline's CPU per audio second with them and
// without, then the patched model's inference time against the unpatched one's.
func runTimings(nArticles, runs int) error {
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

	if err := timePipelines(dir, bin, lib, cfg, paths); err != nil {
		return err
	}
	return timeInference(dir, bin, lib, runs)
}

// timePipelines narrates the articles at paths with the same tone voice (its config cfg),
// with word timings (one Ceil node, patched at install) and without (two, so not alignable;
// the same frames, so the same audio), and prints the pipeline's CPU per audio second.
func timePipelines(dir, bin, lib string, cfg []byte, paths []string) error {
	variants := []struct {
		name  string
		ceils int
	}{{"sentence timings", 2}, {"word timings", 1}}
	var results []result
	perAudio := map[string][2]float64{} // pipeline CPU s, audio s
	for _, v := range variants {
		vdir := filepath.Join(dir, fmt.Sprintf("voice-%d", v.ceils))
		if err := os.MkdirAll(vdir, 0o700); err != nil {
			return err
		}
		model := filepath.Join(vdir, "en_US-tone-medium.onnx")
		if err := os.WriteFile(model, onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: v.ceils}), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(model+".json", cfg, 0o600); err != nil {
			return err
		}
		data := filepath.Join(dir, fmt.Sprintf("data-%d", v.ceils))
		out, err := exec.Command(bin, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", "--priority", "1", "--json", model).CombinedOutput()
		if err != nil {
			return fmt.Errorf("voices install: %v\n%s", err, out)
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
			r, err := narrate(srv, bin, filepath.Base(p), string(raw), false)
			if err != nil {
				srv.Stop()
				return fmt.Errorf("%s with %s: %w\n%s", filepath.Base(p), v.name, err, logs.String())
			}
			r.voice = v.name
			results = append(results, r)
			t := perAudio[v.name]
			perAudio[v.name] = [2]float64{t[0] + (r.cpu - r.modelCPU).Seconds(), t[1] + r.audio.Seconds()}
		}
		srv.Stop()
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "article\ttimings\taudio s\tCPU s per audio s\tmodel\tpipeline\t")
	for _, r := range results {
		a := r.audio.Seconds()
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.4f\t%.4f\t%.4f\t\n", r.article, r.voice, a, r.cpu.Seconds()/a, r.modelCPU.Seconds()/a, (r.cpu-r.modelCPU).Seconds()/a)
	}
	tw.Flush()
	with, without := perAudio["word timings"], perAudio["sentence timings"]
	fmt.Printf("pipeline CPU per audio second: %.4f with word timings, %.4f without: %.3f×\n", with[0]/with[1], without[0]/without[1], (with[0]/with[1])/(without[0]/without[1]))
	return nil
}

// timeInference runs the same model, as the operator gave it and patched, in turn on the same
// sentence, each by its own worker, and prints their median inference times over runs.
func timeInference(dir, bin, lib string, runs int) error {
	plain := onnxtest.PiperTimed(onnxtest.TimedOptions{Ceils: 1, Compute: timingsCompute})
	patched, _, err := neural.MarkDurations(plain)
	if err != nil {
		return err
	}
	ids := make([]int64, 120) // a sentence of about 60 phonemes, with their pads
	for i := range ids {
		ids[i] = int64(i*7) % 100
	}
	in := worker.PiperInput{IDs: ids, NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8}
	pools := make([]*worker.Pool, 2)
	for i, m := range [][]byte{plain, patched} {
		path := filepath.Join(dir, fmt.Sprintf("model-%d.onnx", i))
		if err := os.WriteFile(path, m, 0o600); err != nil {
			return err
		}
		if pools[i], err = worker.New(worker.Config{Command: []string{bin, "onnx-worker"}, Library: lib, Model: path}); err != nil {
			return err
		}
		defer pools[i].Close()
	}
	ctx := context.Background()
	took := [2][]time.Duration{}
	for n := -5; n < runs; n++ { // 5 runs each to warm up
		for i, p := range pools {
			start := time.Now()
			_, frames, err := p.PiperFrames(ctx, in, time.Minute)
			if err != nil {
				return err
			}
			if (i == 1) != (len(frames) == len(ids)) {
				return fmt.Errorf("model %d gave %d frames for %d IDs", i, len(frames), len(ids))
			}
			if n >= 0 {
				took[i] = append(took[i], time.Since(start))
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	a, b := median(took[0]), median(took[1])
	fmt.Printf("inference, median of %d runs each: patched %.2f ms, unpatched %.2f ms: %.3f×\n", runs, b.Seconds()*1000, a.Seconds()*1000, b.Seconds()/a.Seconds())
	return nil
}
