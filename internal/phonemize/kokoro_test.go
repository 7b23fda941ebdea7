package phonemize_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator/internal/phonemize"
	"github.com/narrator/narrator/internal/proc"
)

func TestKokoro(t *testing.T) {
	t.Parallel()
	p := mustPhonemizer(t, phonemize.Options{Options: proc.Options{Procs: 2}})
	for _, tt := range []struct {
		voice, text, want string
	}{
		// The punctuation comes back with the spaces around it, stress is kept.
		{"en-us", "Hello, world!", "həlˈoʊ, wˈɜːld!"},
		{"en-us", "  Hello world  ", "həlˈoʊ wˈɜːld"},
		{"en-us", "“Quoted” text… (aside) and more.", "“kwˈoʊɾᵻd” tˈɛkst… (ɐsˈaɪd) ænd mˈoːɹ."},
		{"en-us", "Wait... what?!", "wˈeɪt... wˌʌt?!"},
		{"en-us", "?!", "?!"},
		{"en-us", "", ""},
		{"en-gb", "Hello there, mate.", "həlˈəʊ ðˈeə, mˈeɪt."},
		{"fr-fr", "Bonjour, le monde !", "bɔ̃ʒˈuʁ, lə mˈɔ̃d !"}, // espeak-ng's "lə-": "-" is not in the vocabulary,
	} {
		t.Run(tt.voice+"/"+tt.text, func(t *testing.T) {
			t.Parallel()
			got, err := p.Kokoro(t.Context(), tt.voice, tt.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Kokoro(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	if _, err := p.Kokoro(t.Context(), "-v", "test", nil); err == nil {
		t.Error("a voice read as an option was accepted")
	}
}

func TestKokoroTokens(t *testing.T) {
	t.Parallel()
	// "həlˈoʊ, wˈɜːld!" in Kokoro v1.0's vocabulary, padded.
	want := [][]int64{{0, 50, 83, 54, 156, 57, 135, 3, 16, 65, 156, 87, 158, 54, 46, 5, 0}}
	if diff := cmp.Diff(want, phonemize.KokoroTokens("həlˈoʊ, wˈɜːld!", nil)); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	// Symbols the vocabulary lacks are left out.
	if diff := cmp.Diff([][]int64{{0, 43, 44, 0}}, phonemize.KokoroTokens("a\u0301#b", nil)); diff != "" {
		t.Errorf("unknown symbols (-want +got):\n%s", diff)
	}
	if got := phonemize.KokoroTokens("", nil); len(got) != 0 {
		t.Errorf("empty phonemes: %v", got)
	}

	sentence := "ðə kˈaʊnsəl əpɹˈuːvd ðə bˈʌdʒɪt fɚðə nˈuː lˈaɪbɹɛɹi"
	for _, tt := range []struct {
		name     string
		phonemes string
	}{
		{"sentences", strings.Repeat(sentence+". ", 60)},
		{"commas", strings.Repeat(sentence+", ", 60)},
		{"no punctuation", strings.Repeat(sentence+" ", 60)},
		{"no spaces", strings.Repeat("a", 2000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			chunks := phonemize.KokoroTokens(tt.phonemes, nil)
			if len(chunks) < 2 {
				t.Fatalf("%d chunks, want several", len(chunks))
			}
			total := 0
			for i, c := range chunks {
				if len(c)-2 > phonemize.KokoroMaxTokens || len(c) < 3 || c[0] != 0 || c[len(c)-1] != 0 {
					t.Errorf("chunk %d: %d tokens, first %d, last %d", i, len(c), c[0], c[len(c)-1])
				}
				for _, tok := range c[1 : len(c)-1] {
					if tok == 0 {
						t.Errorf("chunk %d holds a pad inside", i)
					}
				}
				total += len(c) - 2
			}
			// Every phoneme but the spaces where chunks were cut is kept.
			if want := utf8.RuneCountInString(strings.TrimSpace(tt.phonemes)); total < want-len(chunks) || total > want {
				t.Errorf("%d tokens in all, want about %d", total, want)
			}
		})
	}
}

func TestParseKokoroVoice(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		want phonemize.KokoroVoice
	}{
		{"af_heart", phonemize.KokoroVoice{Language: "en_US", Female: true, EspeakVoice: "en-us"}},
		{"am_michael", phonemize.KokoroVoice{Language: "en_US", EspeakVoice: "en-us"}},
		{"bf_emma", phonemize.KokoroVoice{Language: "en_GB", Female: true, EspeakVoice: "en-gb"}},
		{"bm_george", phonemize.KokoroVoice{Language: "en_GB", EspeakVoice: "en-gb"}},
		{"ef_dora", phonemize.KokoroVoice{Language: "es_ES", Female: true, EspeakVoice: "es"}},
		{"em_alex", phonemize.KokoroVoice{Language: "es_ES", EspeakVoice: "es"}},
		{"ff_siwis", phonemize.KokoroVoice{Language: "fr_FR", Female: true, EspeakVoice: "fr-fr"}},
		{"hf_alpha", phonemize.KokoroVoice{Language: "hi_IN", Female: true, EspeakVoice: "hi"}},
		{"hm_omega", phonemize.KokoroVoice{Language: "hi_IN", EspeakVoice: "hi"}},
		{"if_sara", phonemize.KokoroVoice{Language: "it_IT", Female: true, EspeakVoice: "it"}},
		{"im_nicola", phonemize.KokoroVoice{Language: "it_IT", EspeakVoice: "it"}},
		{"pf_dora", phonemize.KokoroVoice{Language: "pt_BR", Female: true, EspeakVoice: "pt-br"}},
		{"pm_alex", phonemize.KokoroVoice{Language: "pt_BR", EspeakVoice: "pt-br"}},
	} {
		got, err := phonemize.ParseKokoroVoice(tt.name)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	for _, name := range []string{"jf_alpha", "jm_kumo", "zf_xiaobei", "zm_yunjian"} {
		v, err := phonemize.ParseKokoroVoice(name)
		if !errors.Is(err, phonemize.ErrNoPhonemizer) {
			t.Errorf("%s: error %v, want ErrNoPhonemizer", name, err)
		}
		if v.Language == "" || v.EspeakVoice != "" {
			t.Errorf("%s: %+v", name, v)
		}
	}
	for _, name := range []string{"", "af", "af-heart", "ax_heart", "xf_heart", "af_"} {
		if _, err := phonemize.ParseKokoroVoice(name); err == nil || errors.Is(err, phonemize.ErrNoPhonemizer) {
			t.Errorf("%q: error %v, want a bad name", name, err)
		}
	}
}

func TestParseKokoroVocab(t *testing.T) {
	t.Parallel()
	vocab := make(map[string]int64)
	for r, id := range phonemize.KokoroVocab() {
		vocab[string(r)] = id
	}
	data, err := json.Marshal(map[string]any{"n_token": 178, "vocab": vocab})
	if err != nil {
		t.Fatal(err)
	}
	got, err := phonemize.ParseKokoroVocab(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(phonemize.KokoroVocab(), got); diff != "" {
		t.Errorf("vocab (-want +got):\n%s", diff)
	}
	if len(got) != 114 || got['ˈ'] != 156 || got['ᵻ'] != 177 || got[';'] != 1 {
		t.Errorf("Kokoro v1.0 vocabulary: %d symbols, ˈ %d, ᵻ %d, ; %d", len(got), got['ˈ'], got['ᵻ'], got[';'])
	}
	for _, tt := range []struct{ data, want string }{
		{`{`, "kokoro config"},
		{`{"n_token": 178}`, "vocab is missing"},
		{`{"vocab": {"ab": 3}}`, "not one code point"},
		{`{"vocab": {"a": 0}}`, "want a token from 1 to 511"},
		{`{"vocab": {"a": 600}}`, "want a token from 1 to 511"},
	} {
		if _, err := phonemize.ParseKokoroVocab([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.data, err, tt.want)
		}
	}
}
