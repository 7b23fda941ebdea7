package neural_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
	"github.com/narrator/narrator/internal/proctest"
)

// workerArg makes the test binary a worker process, as "narrator onnx-worker" is.
const workerArg = "neural-test-onnx-worker"

// espeakHelper is the narrator-espeak program TestMain built, or "" with helperErr.
var espeakHelper string
var helperErr error

func TestMain(m *testing.M) {
	onnxtest.ServeWorker(workerArg)
	dir, err := os.MkdirTemp("", "neural-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	espeakHelper = filepath.Join(dir, "narrator-espeak")
	if out, err := exec.Command("cc", "-O2", "-o", espeakHelper, "../phonemize/helper/narrator-espeak.c", "-lespeak-ng").CombinedOutput(); err != nil {
		helperErr = fmt.Errorf("build narrator-espeak: %v: %s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newPhonemizer returns a phonemiser over the narrator-espeak TestMain built.
func newPhonemizer(t *testing.T) *phonemize.Phonemizer {
	t.Helper()
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	phon, err := phonemize.New(phonemize.Options{Options: proc.Options{Procs: 2}, Command: espeakHelper})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { phon.Close() })
	return phon
}

// scale is the tiny models' encoding scale: fine enough that every value survives 16-bit PCM
// (one PCM step is 1/128 of a value unit), coarse enough for phoneme IDs below 256.
const scale = 1.0 / 256

// memVoices is a voice source over a fixed set.
type memVoices struct {
	mu     sync.Mutex
	voices []*narrator.InstalledVoice
}

func (m *memVoices) Installed(_ context.Context, id string) (*narrator.InstalledVoice, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return narrator.FindInstalledVoice(m.voices, id)
}

// rig is an engine over a real media store, espeak-ng and onnxruntime, in the sandbox.
type rig struct {
	cacheDir string
	engine   *neural.Engine
	media    *localfs.Store
	voices   *memVoices
	phon     *phonemize.Phonemizer
}

func newRig(t *testing.T, opts neural.Options) *rig {
	t.Helper()
	media, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	phon := newPhonemizer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{media: media, voices: &memVoices{}, phon: phon}
	opts.Voices, opts.Files, opts.Phonemizer = r.voices, media, phon
	opts.CacheDir = filepath.Join(t.TempDir(), "cache")
	r.cacheDir = opts.CacheDir
	opts.Command = []string{exe, workerArg}
	if opts.Library == "" {
		opts.Library = onnxtest.Library(t)
	}
	if opts.Sandbox == nil {
		opts.Sandbox = proctest.Sandbox(t)
	}
	opts.Runs = 2
	r.engine, err = neural.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.engine.Close() })
	return r
}

// put stores data in the media store as an installed voice's file.
func (r *rig) put(t *testing.T, role, name string, data []byte) narrator.VoiceFile {
	t.Helper()
	sum := sha256.Sum256(data)
	f := narrator.VoiceFile{Role: role, Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	if err := r.media.Put(t.Context(), f.Key(), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return f
}

// piperIDs returns the parsed config cfg of a voice and the phoneme IDs, sentence by sentence,
// that the rig's phonemizer makes of text for it: what the voice's model must be sent.
func (r *rig) piperIDs(t *testing.T, cfg []byte, text string) (*phonemize.PiperConfig, [][]int64) {
	t.Helper()
	c, err := phonemize.ParsePiperConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := r.phon.Piper(t.Context(), c, text)
	if err != nil {
		t.Fatal(err)
	}
	return c, ids
}

// install adds an installed voice to the rig's source.
func (r *rig) install(v *narrator.InstalledVoice) {
	r.voices.mu.Lock()
	defer r.voices.mu.Unlock()
	r.voices.voices = append(r.voices.voices, v)
}

// piperConfig returns the test voice config, changed by edit.
func piperConfig(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/en_US-test.onnx.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decode reads the values a tiny model encoded, from 16-bit PCM, each repeated repeat times.
func decode(t *testing.T, samples []int16, repeat int) []float64 {
	t.Helper()
	if len(samples)%repeat != 0 {
		t.Fatalf("%d samples, not a multiple of %d", len(samples), repeat)
	}
	out := make([]float64, len(samples)/repeat)
	for i := range out {
		out[i] = float64(samples[i*repeat]) / math.MaxInt16 / scale
	}
	return out
}

func ints(vs []float64) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = int64(math.Round(v))
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.01 }

// TestPiper speaks through tiny Piper models, with and without a speaker ID, and checks that
// each sentence's IDs, as the phonemiser makes them, its scales, with the rate dividing the
// length scale, and the speaker reach the model, and that the sentences come back in order.
func TestPiper(t *testing.T) {
	t.Parallel()
	const text = "Test 1. Test 2? The third sentence, with a comma!"
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprintf("multispeaker=%v", multi), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, neural.Options{})
			const repeat = 3
			model := onnxtest.Piper(onnxtest.PiperOptions{MultiSpeaker: multi, Scale: scale, Repeat: repeat})
			cfg := piperConfig(t, func(m map[string]any) {
				m["inference"] = map[string]any{"noise_scale": 0.5, "length_scale": 1.2, "noise_w": 0.75}
				if multi {
					m["num_speakers"] = 3
					m["speaker_id_map"] = map[string]int{"alice": 0, "bob": 2, "carol": 1}
				}
			})
			v := &narrator.InstalledVoice{
				Voice: narrator.Voice{Name: "Tiny", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tiny"},
				Files: []narrator.VoiceFile{r.put(t, narrator.VoiceFileModel, "tiny.onnx", model), r.put(t, narrator.VoiceFileConfig, "tiny.onnx.json", cfg)},
			}
			if multi {
				v.Speaker = "bob"
			}
			r.install(v)
			samples, rate, err := r.engine.Synthesize(t.Context(), "piper-tiny", text, 1.5)
			if err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			if rate != 22050 {
				t.Errorf("sample rate %d, want the config's 22050", rate)
			}
			_, want := r.piperIDs(t, cfg, text)
			if len(want) != 3 {
				t.Fatalf("the phonemiser made %d sentences of %q, want 3", len(want), text)
			}
			pause := int(0.15 * float64(rate))
			tail := 4
			if multi {
				tail = 5
			}
			for i, ids := range want {
				n := (len(ids) + tail) * repeat
				if len(samples) < n {
					t.Fatalf("sentence %d: %d samples left, want %d", i, len(samples), n)
				}
				got := decode(t, samples[:n], repeat)
				samples = samples[n:]
				if i < len(want)-1 {
					if len(samples) < pause || slices.ContainsFunc(samples[:pause], func(s int16) bool { return s != 0 }) {
						t.Fatalf("sentence %d: no silence of %d samples after it", i, pause)
					}
					samples = samples[pause:]
				}
				if gotIDs := ints(got[:len(ids)]); !slices.Equal(gotIDs, ids) {
					t.Errorf("sentence %d: model got IDs %v, want %v", i, gotIDs, ids)
				}
				rest := got[len(ids):]
				if int(math.Round(rest[0])) != len(ids) {
					t.Errorf("sentence %d: input_lengths %g, want %d", i, rest[0], len(ids))
				}
				if !near(rest[1], 0.5) || !near(rest[2], 1.2/1.5) || !near(rest[3], 0.75) {
					t.Errorf("sentence %d: scales %v, want [0.5 %.3f 0.75]: the config's, the length scale divided by the rate", i, rest[1:4], 1.2/1.5)
				}
				if multi && int(math.Round(rest[4])) != 2 {
					t.Errorf("sentence %d: sid %g, want bob's, 2", i, rest[4])
				}
			}
			if len(samples) != 0 {
				t.Errorf("%d samples after the last sentence", len(samples))
			}
		})
	}
}

// kokoroStyles returns an npz voices file holding the voices names, whose style row r holds
// r/8 plus the voice's index in every place, and the voice's index.
func kokoroStyles(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := newNPZ(&buf)
	for k, name := range names {
		table := make([]float32, neural.StyleRows*worker.StyleSize)
		for r := range neural.StyleRows {
			for c := range worker.StyleSize {
				table[r*worker.StyleSize+c] = float32(r)/8 + float32(k)
			}
		}
		zw.add(t, name, table)
	}
	zw.close(t)
	return buf.Bytes()
}

// TestKokoro speaks through tiny Kokoro models of every signature (tokens or input_ids, float
// or int32 speed) and checks that the tokens, padded with 0, the style row of the voice for
// the token count, and the speed reach the model.
func TestKokoro(t *testing.T) {
	t.Parallel()
	const text = "Hello there, how are you today?"
	for _, tc := range []struct {
		name string
		o    onnxtest.KokoroOptions
	}{
		{"tokens-float", onnxtest.KokoroOptions{}},
		{"input_ids-float", onnxtest.KokoroOptions{InputIDs: true}},
		{"tokens-int32", onnxtest.KokoroOptions{Speed: worker.Int32}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, neural.Options{})
			tc.o.Scale, tc.o.Repeat = scale, 2
			styles := r.put(t, narrator.VoiceFileStyles, "voices-v1.0.bin", kokoroStyles(t, "af_heart", "am_adam"))
			model := r.put(t, narrator.VoiceFileModel, "kokoro.onnx", onnxtest.Kokoro(tc.o))
			r.install(&narrator.InstalledVoice{
				Voice:   narrator.Voice{Name: "Adam", Gender: narrator.GenderMale, Language: "en_US", Engine: narrator.EngineKokoro, EngineVoice: "kokoro-am_adam"},
				Speaker: "am_adam",
				Files:   []narrator.VoiceFile{model, styles},
			})
			speed := 2.0
			samples, rate, err := r.engine.Synthesize(t.Context(), "kokoro-am_adam", text, speed)
			if err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			if rate != 24000 {
				t.Errorf("sample rate %d, want 24000", rate)
			}
			phonemes, err := r.phon.Kokoro(t.Context(), "en-us", text, nil)
			if err != nil {
				t.Fatal(err)
			}
			chunks := phonemize.KokoroTokens(phonemes, nil)
			if len(chunks) != 1 {
				t.Fatalf("%d chunks, want 1", len(chunks))
			}
			tokens := chunks[0]
			got := decode(t, samples, 2)
			if len(got) != len(tokens)+worker.StyleSize+1 {
				t.Fatalf("model got %d values, want %d tokens, 256 style values and the speed", len(got), len(tokens))
			}
			if gotTokens := ints(got[:len(tokens)]); !slices.Equal(gotTokens, tokens) || tokens[0] != 0 || tokens[len(tokens)-1] != 0 {
				t.Errorf("model got tokens %v, want %v, padded with 0", gotTokens, tokens)
			}
			// am_adam is the second voice (+1); the row is the token count without padding.
			wantStyle := float64(len(tokens)-2)/8 + 1
			for c, s := range got[len(tokens) : len(tokens)+worker.StyleSize] {
				if !near(s, wantStyle) {
					t.Fatalf("style value %d = %g, want %g: row %d of am_adam", c, s, wantStyle, len(tokens)-2)
				}
			}
			if s := got[len(got)-1]; !near(s, speed) {
				t.Errorf("speed %g, want %g", s, speed)
			}
		})
	}
}

// TestMissingRuntime checks that without a library every neural voice is refused with a
// message naming the flag.
func TestMissingRuntime(t *testing.T) {
	t.Parallel()
	e, err := neural.New(neural.Options{Voices: &memVoices{}, Phonemizer: newPhonemizer(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.Synthesize(t.Context(), "piper-x", "Hello.", 1)
	if !errors.Is(err, neural.ErrNoRuntime) || !strings.Contains(err.Error(), "--onnxruntime") {
		t.Errorf("err = %v, want ErrNoRuntime naming --onnxruntime", err)
	}
	if err := e.Ping(t.Context()); err != nil {
		t.Errorf("Ping = %v; without a library the engine is up, refusing neural voices", err)
	}
}

// TestBadFiles checks that a voice whose stored file is damaged, or whose model is of the
// other kind, fails with a clear error and leaves the engine working.
func TestBadFiles(t *testing.T) {
	t.Parallel()
	r := newRig(t, neural.Options{})
	cfg := r.put(t, narrator.VoiceFileConfig, "tiny.onnx.json", piperConfig(t, nil))
	good := r.put(t, narrator.VoiceFileModel, "tiny.onnx", onnxtest.Piper(onnxtest.PiperOptions{Scale: scale}))
	damaged := good
	damaged.SHA256 = strings.Repeat("0", 64) // stored under a key it does not match
	if err := r.media.Put(t.Context(), damaged.Key(), bytes.NewReader(onnxtest.Piper(onnxtest.PiperOptions{}))); err != nil {
		t.Fatal(err)
	}
	kokoro := r.put(t, narrator.VoiceFileModel, "kokoro.onnx", onnxtest.Kokoro(onnxtest.KokoroOptions{}))
	entry := func(id string, files ...narrator.VoiceFile) *narrator.InstalledVoice {
		return &narrator.InstalledVoice{Voice: narrator.Voice{Name: id, Gender: narrator.GenderMale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: id}, Files: files}
	}
	r.install(entry("piper-damaged", damaged, cfg))
	r.install(entry("piper-kokoro", kokoro, cfg))
	r.install(entry("piper-good", good, cfg))
	for id, want := range map[string]string{"piper-damaged": "SHA-256", "piper-kokoro": "kokoro model", "piper-missing": "no installed voice"} {
		if _, _, err := r.engine.Synthesize(t.Context(), id, "Hello.", 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one saying %q", id, err, want)
		}
	}
	if _, _, err := r.engine.Synthesize(t.Context(), "piper-good", "Hello.", 1); err != nil {
		t.Errorf("a good voice after bad ones: %v", err)
	}
}

// TestBrokenModelIsVoiceError checks that a model onnxruntime cannot run, here one whose
// Gather reads an index beyond its one weight, fails as the voice's fault: an error that
// nothing retries (EINVALID), whose message names the voice and does not blame the text.
func TestBrokenModelIsVoiceError(t *testing.T) {
	t.Parallel()
	r := newRig(t, neural.Options{})
	// Every run gathers weight number input_lengths, at least 1, of a single weight.
	model := r.put(t, narrator.VoiceFileModel, "broken.onnx", onnxtest.Piper(onnxtest.PiperOptions{Scale: scale, Weights: 1}))
	cfg := r.put(t, narrator.VoiceFileConfig, "broken.onnx.json", piperConfig(t, nil))
	r.install(&narrator.InstalledVoice{
		Voice: narrator.Voice{Name: "Tone", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tone"},
		Files: []narrator.VoiceFile{model, cfg},
	})
	_, _, err := r.engine.Synthesize(t.Context(), "piper-tone", "Hello there.", 1)
	if err == nil {
		t.Fatal("a model that fails at run time spoke")
	}
	if code := narrator.ErrorCode(err); code != narrator.EINVALID {
		t.Errorf("error code %q, want %q (not worth retrying): %v", code, narrator.EINVALID, err)
	}
	if msg := narrator.ErrorMessage(err); !strings.Contains(msg, "Tone (Female)") || !strings.Contains(msg, "not of the text") {
		t.Errorf("message %q, want one naming the voice Tone (Female) as at fault", msg)
	}
	if !errors.Is(err, worker.ErrRun) {
		t.Errorf("the run's error is lost: %v", err)
	}
}

// TestRemovedVoiceReleased checks that a voice removed from the catalog is refused, and that
// its model's workers and cached files go with it.
func TestRemovedVoiceReleased(t *testing.T) {
	t.Parallel()
	r := newRig(t, neural.Options{})
	model := r.put(t, narrator.VoiceFileModel, "tiny.onnx", onnxtest.Piper(onnxtest.PiperOptions{Scale: scale}))
	cfg := r.put(t, narrator.VoiceFileConfig, "tiny.onnx.json", piperConfig(t, nil))
	r.install(&narrator.InstalledVoice{
		Voice: narrator.Voice{Name: "Tiny", Gender: narrator.GenderFemale, Language: "en_US", Engine: narrator.EnginePiper, EngineVoice: "piper-tiny"},
		Files: []narrator.VoiceFile{model, cfg},
	})
	if _, _, err := r.engine.Synthesize(t.Context(), "piper-tiny", "Hello.", 1); err != nil {
		t.Fatal(err)
	}
	cached := filepath.Join(r.cacheDir, model.SHA256)
	if _, err := os.Stat(cached); err != nil {
		t.Fatalf("the model is not cached: %v", err)
	}
	r.voices.mu.Lock()
	r.voices.voices = nil
	r.voices.mu.Unlock()
	if _, _, err := r.engine.Synthesize(t.Context(), "piper-tiny", "Hello.", 1); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("a removed voice: %v, want ENOTFOUND", err)
	}
	if _, err := os.Stat(cached); !os.IsNotExist(err) {
		t.Errorf("the removed voice's model is still cached: %v", err)
	}
}
