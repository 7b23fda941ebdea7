package phonemize_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
)

// mustPiperConfig reads testdata/en_US-test.onnx.json, a voice config with Piper's standard
// phoneme ID map (piper's DEFAULT_PHONEME_ID_MAP, as in piper1-gpl's tests/test_voice.onnx.json),
// and sets its espeak-ng voice.
func mustPiperConfig(tb testing.TB, espeakVoice string) *phonemize.PiperConfig {
	tb.Helper()
	data, err := os.ReadFile("testdata/en_US-test.onnx.json")
	if err != nil {
		tb.Fatal(err)
	}
	c, err := phonemize.ParsePiperConfig(data)
	if err != nil {
		tb.Fatal(err)
	}
	c.EspeakVoice = espeakVoice
	return c
}

// split turns "t ˈ ɛ" into {"t", "ˈ", "ɛ"}, and "_" into a space.
func split(s string) []string {
	f := strings.Fields(s)
	for i, ph := range f {
		if ph == "_" {
			f[i] = " "
		}
	}
	return f
}

// piperVectors are the phoneme and phoneme-ID vectors published in piper-phonemize's tests
// (src/test.cpp, src/python_test.py) and piper1-gpl's (tests/test_piper.py,
// tests/test_espeak_phonemizer.py), re-typed. phonemes has one string per sentence, the
// phonemes separated by spaces ("_" is a space phoneme); ids, where published, one vector per
// sentence.
var piperVectors = []struct {
	source   string
	voice    string
	text     string
	phonemes []string
	ids      [][]int64
	clusters bool // with piper1-gpl's English vowel clusters
}{
	{
		source: "piper-phonemize src/test.cpp, src/python_test.py", voice: "de", text: "licht!",
		phonemes: []string{"l ˈ ɪ c \u0327 t !"},
		ids:      [][]int64{{1, 0, 24, 0, 120, 0, 74, 0, 16, 0, 140, 0, 32, 0, 4, 0, 2}},
	},
	{
		source: "piper-phonemize src/test.cpp", voice: "en-us", text: "this, is: a; test.",
		phonemes: []string{"ð ˈ ɪ s , _ ɪ z : _ ˈ e ɪ ; _ t ˈ ɛ s t ."},
	},
	{
		source: "piper-phonemize src/test.cpp; piper1-gpl tests/test_piper.py", voice: "en-us", text: "Test 1. Test 2.",
		phonemes: []string{"t ˈ ɛ s t _ w ˈ ʌ n .", "t ˈ ɛ s t _ t ˈ u ː ."},
		ids: [][]int64{
			{1, 0, 32, 0, 120, 0, 61, 0, 31, 0, 32, 0, 3, 0, 35, 0, 120, 0, 102, 0, 26, 0, 10, 0, 2},
			{1, 0, 32, 0, 120, 0, 61, 0, 31, 0, 32, 0, 3, 0, 32, 0, 120, 0, 33, 0, 122, 0, 10, 0, 2},
		},
	},
	{
		source: "piper-phonemize src/python_test.py", voice: "en-us", text: "Test 1. Test2.",
		phonemes: []string{"t ˈ ɛ s t _ w ˈ ʌ n .", "t ˈ ɛ s t _ t ˈ u ː ."},
	},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "test", phonemes: []string{"t ˈ ɛ s t"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "my", phonemes: []string{"m ˈ a ɪ"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "cow", phonemes: []string{"k ˈ a ʊ"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "toy", phonemes: []string{"t ˈ ɔ ɪ"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "day", phonemes: []string{"d ˈ e ɪ"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "no", phonemes: []string{"n ˈ o ʊ"}},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "my", phonemes: []string{"m ˈ aɪ"}, clusters: true},
	{source: "piper1-gpl tests/test_espeak_phonemizer.py", voice: "en-us", text: "no", phonemes: []string{"n ˈ oʊ"}, clusters: true},
	{
		source: "piper1-gpl tests/test_piper.py", voice: "en-us", text: "my cow toy day no", clusters: true,
		phonemes: []string{"m aɪ _ k ˈ aʊ _ t ˈ ɔɪ _ d ˈ eɪ _ n ˈ oʊ"},
		ids: [][]int64{{1, 0, 25, 0, 161, 0, 3, 0, 23, 0, 120, 0, 162, 0, 3, 0, 32, 0, 120, 0, 163, 0, 3, 0,
			17, 0, 120, 0, 164, 0, 3, 0, 26, 0, 120, 0, 165, 0, 2}},
	},
	{source: "piper1-gpl tests/test_piper.py (language flags removed)", voice: "ar", text: "test", phonemes: []string{"t ˈ ɛ s t"}},
	// test_raw_phonemes: the text around the [[ ]] blocks, which piper1-gpl reads with espeak-ng.
	{source: "piper1-gpl tests/test_piper.py (raw phonemes)", voice: "en-us", text: "I am the", phonemes: []string{"a ɪ ɐ m _ ð ə"}},
	{source: "piper1-gpl tests/test_piper.py (raw phonemes)", voice: "en-us", text: "not", phonemes: []string{"n ˈ ɑ ː t"}},
	{source: "piper1-gpl tests/test_piper.py (tashkeel off)", voice: "ar", text: "بسم الله الرحمن الرحيم",
		phonemes: []string{"b ˈ i s m i l l ˌ a ː h _ ʔ ˈ a r ɹ a ħ m ˌ a ː n _ ʔ a r r ˈ a ħ i ː m"}},
}

// enUSVowelClusters are piper1-gpl's EN_US_VOWEL_CLUSTERS (tests/__init__.py).
var enUSVowelClusters = [][]string{{"a", "ɪ"}, {"a", "ʊ"}, {"ɔ", "ɪ"}, {"e", "ɪ"}, {"o", "ʊ"}}

func TestPiperVectors(t *testing.T) {
	t.Parallel()
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 2, Sandbox: mustSandbox(t)}})
	for _, v := range piperVectors {
		t.Run(v.voice+"/"+v.text, func(t *testing.T) {
			t.Parallel()
			c := mustPiperConfig(t, v.voice)
			if v.clusters {
				c.VowelClusters = enUSVowelClusters
			}
			clauses, err := p.Phonemize(t.Context(), v.voice, v.text)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Sentences(clauses)
			var want [][]string
			for _, s := range v.phonemes {
				want = append(want, split(s))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("phonemes of %q in %s (%s) (-want +got):\n%s", v.text, v.voice, v.source, diff)
			}
			if v.ids == nil {
				return
			}
			var ids [][]int64
			for _, s := range got {
				ids = append(ids, c.IDs(s))
			}
			if diff := cmp.Diff(v.ids, ids); diff != "" {
				t.Errorf("IDs of %q in %s (%s) (-want +got):\n%s", v.text, v.voice, v.source, diff)
			}
			all, err := p.Piper(t.Context(), c, v.text)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(v.ids, all); diff != "" {
				t.Errorf("Piper(%q) (-want +got):\n%s", v.text, diff)
			}
		})
	}
}

func TestPiperIDs(t *testing.T) {
	t.Parallel()
	c := mustPiperConfig(t, "en-us")
	// piper-phonemize's src/test.cpp: a phoneme missing from the map is left out.
	if diff := cmp.Diff([]int64{1, 0, 2}, c.IDs([]string{"\x00", "\x00", "\x00"})); diff != "" {
		t.Errorf("missing phonemes (-want +got):\n%s", diff)
	}
	// The phoneme map applies before the IDs: piper-phonemize's default map for pt-br
	// reads "c" as "k".
	c.PhonemeMap = map[rune][]rune{'c': {'k'}}
	got := c.Sentences([]phonemize.Clause{{Phonemes: "ca(en)bb(pt)", Punct: "?", SentenceEnd: true}})
	if diff := cmp.Diff([][]string{{"k", "a", "b", "b", "?"}}, got); diff != "" {
		t.Errorf("phoneme map and language flags (-want +got):\n%s", diff)
	}
}

func TestParsePiperConfig(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile("testdata/en_US-test.onnx.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := phonemize.ParsePiperConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.EspeakVoice != "en-us" || c.Language != "en_US" || c.SampleRate != 22050 || c.Quality != "medium" ||
		c.NumSpeakers != 1 || c.NoiseScale != 0.667 || c.LengthScale != 1 || c.NoiseW != 0.8 || len(c.PhonemeIDs) != 166 {
		t.Errorf("parsed %+v", *c)
	}
	// Replace part of the good config's text.
	edit := func(old, new string) []byte {
		s := strings.Replace(string(good), old, new, 1)
		if s == string(good) {
			t.Fatalf("%q not in the config", old)
		}
		return []byte(s)
	}
	multi, err := phonemize.ParsePiperConfig(edit(`"num_speakers": 1,
 "speaker_id_map": {}`, `"num_speakers": 3, "speaker_id_map": {"a": 0, "b": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if multi.NumSpeakers != 3 || multi.SpeakerIDs["b"] != 2 {
		t.Errorf("multi-speaker: %d speakers, %v", multi.NumSpeakers, multi.SpeakerIDs)
	}
	mapped, err := phonemize.ParsePiperConfig(edit(`"phoneme_map": {}`, `"phoneme_map": {"c": ["k"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[rune][]rune{'c': {'k'}}, mapped.PhonemeMap); diff != "" {
		t.Errorf("phoneme map (-want +got):\n%s", diff)
	}
	noInference, err := phonemize.ParsePiperConfig(edit(`"inference": {`, `"inference_not": {`))
	if err != nil {
		t.Fatal(err)
	}
	if noInference.NoiseScale != phonemize.DefaultNoiseScale || noInference.LengthScale != 1 || noInference.NoiseW != phonemize.DefaultNoiseW {
		t.Errorf("defaults: %g %g %g", noInference.NoiseScale, noInference.LengthScale, noInference.NoiseW)
	}

	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"not JSON", []byte("{"), "piper config"},
		{"text phonemes", edit(`"phoneme_type": "espeak"`, `"phoneme_type": "text"`), `phoneme_type "text" is not supported`},
		{"pinyin phonemes", edit(`"phoneme_type": "espeak"`, `"phoneme_type": "pinyin"`), `phoneme_type "pinyin" is not supported`},
		{"no espeak voice", edit(`"voice": "en-us"`, `"voice": ""`), "espeak.voice is missing"},
		{"option voice", edit(`"voice": "en-us"`, `"voice": "--stdin"`), "invalid espeak-ng voice name"},
		{"no sample rate", edit(`"sample_rate": 22050`, `"sample_rate": 0`), "audio.sample_rate"},
		{"negative scale", edit(`"noise_scale": 0.667`, `"noise_scale": -1`), "inference.noise_scale -1 is out of range"},
		{"no pad", edit(`"_": [`, `"_x": [`), `phoneme_id_map has no "_"`},
		{"negative ID", edit(`"a": [
   14`, `"a": [
   -14`), "negative ID -14"},
		{"ID past num_symbols", edit(`"num_symbols": 256`, `"num_symbols": 100`), "num_symbols is 100"},
		{"long phoneme map key", edit(`"phoneme_map": {}`, `"phoneme_map": {"ab": ["k"]}`), "not one code point"},
		{"no speakers", edit(`"num_speakers": 1`, `"num_speakers": 0`), "num_speakers 0"},
		{"speaker out of range", edit(`"speaker_id_map": {}`, `"speaker_id_map": {"x": 1}`), `speaker "x" has ID 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := phonemize.ParsePiperConfig(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
