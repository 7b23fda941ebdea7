// Command edit measures what an edit costs through the real pipeline, with
// the real engines and the default English voices: for each article, the
// time of its first rendering (nothing cached), then of a rendering after
// one sentence changed (the sentence cache and the encoded-chunk cache warm,
// as on a server), and their ratio, in the same run.
//
//	go run ./bench/edit [-cpuprofile edit.prof] [ARTICLE.html ...]
//
// With no arguments it reads bench/testdata/edit-*.html. In each article,
// the sentence after the marker <!--edit--> is the one changed: its first
// word is replaced by "Indeed, " and itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/localfs"
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
		root, err := repoRoot()
		if err != nil {
			return err
		}
		if paths, err = filepath.Glob(filepath.Join(root, "bench", "testdata", "edit-*.html")); err != nil {
			return err
		}
		if len(paths) == 0 {
			return errors.New("no article in bench/testdata/edit-*.html")
		}
	}
	tmp, err := os.MkdirTemp("", "narrator-bench-edit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	media, err := localfs.New(filepath.Join(tmp, "media"))
	if err != nil {
		return err
	}
	cache, err := pipeline.OpenUnitCache(filepath.Join(tmp, "cache"), 1<<30)
	if err != nil {
		return err
	}
	fest, err := festival.New(festival.Options{})
	if err != nil {
		return err
	}
	defer fest.Close()
	fl, err := flite.New(flite.Options{})
	if err != nil {
		return err
	}
	defer fl.Close()
	p := pipeline.New(pipeline.Config{
		Engines:    map[string]pipeline.Synthesizer{narrator.EngineFestival: fest, narrator.EngineFlite: fl},
		Media:      media,
		Cache:      cache,
		ScratchDir: tmp,
	})
	title, body, _ := narrator.DefaultVoices("en_US")
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}

	// Warm the engines' processes, as a running server has them.
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
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		article := string(raw)
		i := strings.Index(article, "<!--edit-->")
		if i < 0 {
			return fmt.Errorf("%s: no <!--edit--> marker", path)
		}
		edited := article[:i] + "Indeed, " + article[i+len("<!--edit-->"):]
		article = article[:i] + article[i+len("<!--edit-->"):]
		title := strings.TrimSuffix(filepath.Base(path), ".html")
		words := len(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(article, " ")))

		start := time.Now()
		first, err := p.Render(ctx, &narrator.Audio{Title: title, Body: article}, proj)
		if err != nil {
			return err
		}
		firstTime := time.Since(start)

		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return err
			}
		}
		start = time.Now()
		_, err = p.Render(ctx, &narrator.Audio{Title: title, Body: edited}, proj)
		editTime := time.Since(start)
		if prof != nil {
			pprof.StopCPUProfile()
			prof = nil
		}
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d words, %.0f s of audio: first rendering %.2f s, one-sentence edit %.3f s, ratio %.1f %%\n",
			filepath.Base(path), words, first.Duration.Seconds(), firstTime.Seconds(), editTime.Seconds(),
			100*editTime.Seconds()/firstTime.Seconds())
	}
	return nil
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", errors.New("run from inside the narrator module")
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
