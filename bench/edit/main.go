// Command edit measures what an edit costs through the real pipeline, with
// the real engines and the default English voices. For each article it
// prints, in the same run:
//
//   - the time of its first rendering, nothing cached;
//   - the time of a rendering after one sentence changed (the sentence in
//     the middle of the article gets a word more), with the sentence cache
//     and the encoded-chunk cache warm, as on a server, and the ratio; and
//     of the same rendering again, all cached, which is what an edit costs
//     beyond synthesising and encoding what changed;
//   - the time to encode the article's audio with one lame process, as the
//     pipeline did before it encoded in chunks, and in chunks on every
//     core, as it does now.
//
// The machine's speed drifts, so compare the ratios, not the times.
//
//	go run ./bench/edit [-cpuprofile edit.prof] [ARTICLE.html ...]
//
// With no arguments it reads bench/testdata/article1000.html and
// bench/testdata/edit-*.html, which no test uses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"

	gomp3 "github.com/hajimehoshi/go-mp3"
	"golang.org/x/sync/errgroup"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pipeline"
)

func main() {
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the edits to this file")
	flag.Parse()
	if err := run(context.Background(), flag.Args(), *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "edit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, paths []string, cpuprofile string) error {
	if len(paths) == 0 {
		var err error
		if paths, err = defaultArticles(); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "edit-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, media, closeAll, err := newPipeline(tmp)
	if err != nil {
		return err
	}
	defer closeAll()
	title, body, _ := narrator.DefaultVoices("en_US")
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}

	// Start the engines' processes, as a running server has them.
	if _, err := p.Render(ctx, &narrator.Audio{Title: "Warm up", Body: "<p>The engines start.</p>"}, proj); err != nil {
		return err
	}
	var prof *os.File
	if cpuprofile != "" {
		if prof, err = os.Create(cpuprofile); err != nil {
			return err
		}
		defer prof.Close()
	}
	fmt.Printf("%d cores; load average %s\n", runtime.NumCPU(), loadAverage())
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		article := string(raw)
		edited, sentence, err := editMiddle(article)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		title := strings.TrimSuffix(filepath.Base(path), ".html")
		words := len(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(article, " ")))

		start := time.Now()
		first, err := p.Render(ctx, &narrator.Audio{Title: title, Body: article}, proj)
		if err != nil {
			return err
		}
		firstTime := time.Since(start)

		editTime, err := renderProfiled(ctx, p, &narrator.Audio{Title: title, Body: edited}, proj, prof)
		if err != nil {
			return err
		}
		prof = nil // only the first edit is profiled
		// What is left when nothing needs synthesising or encoding.
		start = time.Now()
		if _, err := p.Render(ctx, &narrator.Audio{Title: title, Body: edited}, proj); err != nil {
			return err
		}
		againTime := time.Since(start)
		fmt.Printf("%s: %d words, %.0f s of audio; edited: %q\n", filepath.Base(path), words, first.Duration.Seconds(), sentence)
		fmt.Printf("  first rendering %.2f s, one-sentence edit %.3f s: %.1f %% of the first (the same again, all cached: %.3f s)\n",
			firstTime.Seconds(), editTime.Seconds(), 100*editTime.Seconds()/firstTime.Seconds(), againTime.Seconds())

		if err := compareEncoders(ctx, filepath.Join(media.Root(), filepath.FromSlash(first.Keys[narrator.ContentTypeMP3]))); err != nil {
			return err
		}
	}
	return nil
}

// defaultArticles returns the articles the benchmark edits when given none: the 1,000-word
// article and the edit-*.html pages of bench/testdata.
func defaultArticles() ([]string, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	more, err := filepath.Glob(filepath.Join(root, "bench", "testdata", "edit-*.html"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "bench", "testdata", "article1000.html")}, more...), nil
}

// renderProfiled renders a and returns how long it took, with a CPU profile written to prof
// meanwhile unless prof is nil.
func renderProfiled(ctx context.Context, p *pipeline.Pipeline, a *narrator.Audio, proj *narrator.Project, prof *os.File) (time.Duration, error) {
	if prof != nil {
		if err := pprof.StartCPUProfile(prof); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	_, err := p.Render(ctx, a, proj)
	took := time.Since(start)
	if prof != nil {
		pprof.StopCPUProfile()
	}
	return took, err
}

// newPipeline returns a pipeline with festival and flite, its media and unit cache in tmp,
// and a function that closes it and its engines.
func newPipeline(tmp string) (_ *pipeline.Pipeline, _ *localfs.Store, closeAll func(), err error) {
	media, err := localfs.New(filepath.Join(tmp, "media"))
	if err != nil {
		return nil, nil, nil, err
	}
	cache, err := pipeline.OpenUnitCache(filepath.Join(tmp, "cache"), 1<<30)
	if err != nil {
		return nil, nil, nil, err
	}
	fest, err := festival.New(festival.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	fl, err := flite.New(flite.Options{})
	if err != nil {
		fest.Close()
		return nil, nil, nil, err
	}
	p := pipeline.New(pipeline.Config{
		Engines:    map[string]pipeline.Synthesizer{narrator.EngineFestival: fest, narrator.EngineFlite: fl},
		Media:      media,
		Cache:      cache,
		ScratchDir: tmp,
	})
	return p, media, func() {
		p.Close()
		fl.Close()
		fest.Close()
	}, nil
}

// compareEncoders decodes the mp3 at mp3Path and prints how long encoding its audio takes,
// in one lame process and in chunks on every core.
func compareEncoders(ctx context.Context, mp3Path string) error {
	pcm, err := decode(mp3Path)
	if err != nil {
		return err
	}
	// Alternate the two encoders, so that both see the same load.
	var single, chunked, singleCPU, chunkedCPU []time.Duration
	for range 3 {
		wall, cpu, err := timed(func() error { return encodeSingle(ctx, pcm) })
		if err != nil {
			return err
		}
		single, singleCPU = append(single, wall), append(singleCPU, cpu)
		if wall, cpu, err = timed(func() error { return encodeChunked(ctx, pcm) }); err != nil {
			return err
		}
		chunked, chunkedCPU = append(chunked, wall), append(chunkedCPU, cpu)
	}
	fmt.Printf("  encoding its audio (median of 3): one lame process %.2f s (%.2f s of CPU), 8 s chunks on %d cores %.2f s (%.2f s of CPU): %.2fx faster\n",
		median(single).Seconds(), median(singleCPU).Seconds(), runtime.NumCPU(),
		median(chunked).Seconds(), median(chunkedCPU).Seconds(), median(single).Seconds()/median(chunked).Seconds())
	return nil
}

// editMiddle returns the article with the sentence that starts nearest its
// middle given a word more, and that sentence's first words.
func editMiddle(article string) (edited, sentence string, err error) {
	starts := regexp.MustCompile(`[.!?] ([A-Z])`).FindAllStringSubmatchIndex(article, -1)
	best := -1
	for _, m := range starts {
		i := m[2]
		if best < 0 || abs(i-len(article)/2) < abs(best-len(article)/2) {
			best = i
		}
	}
	if best < 0 {
		return "", "", errors.New("no sentence to edit")
	}
	rest := article[best:]
	first := []rune(rest)[0]
	if !strings.HasPrefix(rest, "I ") {
		rest = string(unicode.ToLower(first)) + rest[len(string(first)):]
	}
	edited = article[:best] + "Indeed, " + rest
	end := strings.IndexAny(edited[best:], ".!?")
	return edited, edited[best : best+end+1], nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// decode returns the samples of an MP3 file.
func decode(path string) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := gomp3.NewDecoder(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(d)
	if err != nil {
		return nil, err
	}
	out := make([]int16, len(raw)/4)
	for i := range out {
		out[i] = int16(uint16(raw[4*i]) | uint16(raw[4*i+1])<<8)
	}
	return out, nil
}

var encodeOptions = mp3.Options{SampleRate: pipeline.SampleRate, Bitrate: pipeline.Bitrate, Quality: pipeline.EncoderQuality}

// encodeSingle encodes pcm with one lame process, as the pipeline did
// before it encoded in chunks.
func encodeSingle(ctx context.Context, pcm []int16) error {
	enc, err := mp3.NewEncoder(ctx, io.Discard, encodeOptions)
	if err != nil {
		return err
	}
	if err := enc.Write(pcm); err != nil {
		_ = enc.Close()
		return err
	}
	return enc.Close()
}

// encodeChunked encodes pcm in chunks of 8 s, on a lame worker per core,
// as the pipeline does. The workers are stopped before it returns, so
// that the CPU of the lame processes they ran is counted.
func encodeChunked(ctx context.Context, pcm []int16) error {
	size := 8 * pipeline.SampleRate / mp3.FrameSamples * mp3.FrameSamples
	pool := mp3.NewChunkPool(encodeOptions, runtime.NumCPU(), "")
	defer pool.Close()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for from := 0; from < len(pcm); from += size {
		to := min(from+size, len(pcm))
		c := mp3.Chunk{
			Before:  pcm[max(0, from-mp3.ChunkPrime):from],
			Samples: pcm[from:to],
			After:   pcm[to:min(len(pcm), to+mp3.ChunkPrime)],
			Last:    to == len(pcm),
		}
		g.Go(func() error {
			_, err := pool.Encode(gctx, c)
			return err
		})
	}
	return g.Wait()
}

// timed runs fn and returns its wall time and the CPU time of the
// processes it ran.
func timed(fn func() error) (wall, cpu time.Duration, err error) {
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := fn(); err != nil {
		return 0, 0, err
	}
	wall = time.Since(start)
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after); err != nil {
		return 0, 0, err
	}
	cpu = time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	return wall, cpu, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", errors.New("run from inside the narrator module")
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
