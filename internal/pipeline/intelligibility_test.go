//go:build e2e

package pipeline_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/espeak"
	"github.com/narrator/narrator/internal/festival"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/pipeline"
)

// sharedDir is the shared folder beside the checkout.
func sharedDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("NARRATOR_SHARED"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "tools", "intelligibility.py")); err != nil {
		t.Fatalf("shared tools not found at %s (set NARRATOR_SHARED): %v", d, err)
	}
	return d
}

var accuracyRE = regexp.MustCompile(`accuracy=([0-9.]+)`)

// score runs the shared intelligibility tool on an audio file.
func score(t *testing.T, audio, spoken string) float64 {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "python3", filepath.Join(sharedDir(t), "tools", "intelligibility.py"), audio, spoken).CombinedOutput()
	if err != nil {
		t.Fatalf("intelligibility: %v\n%s", err, out)
	}
	m := accuracyRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no accuracy in %q", out)
	}
	a, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newPipeline is the production pipeline on real engines and local files.
func newPipeline(t *testing.T, media *localfs.Store) *pipeline.Pipeline {
	t.Helper()
	fest, err := festival.New(festival.Options{Procs: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fest.Close() })
	fl, err := flite.New(flite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	es, err := espeak.New(espeak.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	return pipeline.New(pipeline.Config{
		Engines:    map[string]pipeline.Synthesizer{narrator.EngineFestival: fest, narrator.EngineFlite: fl, narrator.EngineEspeak: es},
		Media:      media,
		ScratchDir: t.TempDir(),
	})
}

// TestIntelligibility scores the default English voice on the shared
// samples against festival's own command line reading the same text, with
// its markup removed.
func TestIntelligibility(t *testing.T) {
	samples, err := filepath.Glob(filepath.Join(sharedDir(t), "speech-samples", "*.spoken.txt"))
	if err != nil || len(samples) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	media, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, media)
	title, body, _ := narrator.DefaultVoices("en_US")
	proj := &narrator.Project{ID: 1, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	var mu sync.Mutex
	var ours, theirs float64
	for _, spoken := range samples {
		name := strings.TrimSuffix(filepath.Base(spoken), ".spoken.txt")
		inputs, _ := filepath.Glob(filepath.Join(filepath.Dir(spoken), name+".*"))
		var input string
		for _, in := range inputs {
			if in != spoken {
				input = in
			}
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			keys, _, err := p.Render(t.Context(), &narrator.Audio{ID: 1, Body: string(raw)}, proj)
			if err != nil {
				t.Fatal(err)
			}
			mp3 := filepath.Join(t.TempDir(), "ours.mp3")
			copyBlob(t, media, keys[narrator.ContentTypeMP3], mp3)

			plain := regexp.MustCompile(`<[^>]+>|[#*>]`).ReplaceAllString(string(raw), " ")
			txt := filepath.Join(t.TempDir(), "plain.txt")
			if err := os.WriteFile(txt, []byte(plain), 0o600); err != nil {
				t.Fatal(err)
			}
			wav := filepath.Join(t.TempDir(), "theirs.wav")
			if out, err := exec.CommandContext(context.Background(), "text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", txt, "-o", wav).CombinedOutput(); err != nil {
				t.Fatalf("text2wave: %v\n%s", err, out)
			}
			a, b := score(t, mp3, spoken), score(t, wav, spoken)
			t.Logf("%s: narrator %.3f, text2wave %.3f", name, a, b)
			mu.Lock()
			ours, theirs = ours+a, theirs+b
			mu.Unlock()
			if a < b {
				t.Errorf("%s: narrator scores %.3f, below text2wave's %.3f", name, a, b)
			}
		})
	}
	t.Logf("mean accuracy: narrator %.3f, text2wave %.3f", ours/float64(len(samples)), theirs/float64(len(samples)))
}

func copyBlob(t *testing.T, media *localfs.Store, key, dst string) {
	t.Helper()
	r, _, err := media.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		t.Fatal(err)
	}
}
