package phonemize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The symbols of a Piper phoneme ID map that are no phonemes.
const (
	piperPad = "_" // after every phoneme
	piperBOS = "^" // begins a sentence
	piperEOS = "$" // ends a sentence
)

// Piper's defaults for a voice whose config has no inference block.
const (
	DefaultNoiseScale  = 0.667
	DefaultLengthScale = 1.0
	DefaultNoiseW      = 0.8
	// DefaultHopLength is the samples of one frame of a VITS model's durations.
	DefaultHopLength = 256
)

// PiperConfig is what Narrator reads from a Piper voice's NAME.onnx.json.
type PiperConfig struct {
	// EspeakVoice is the espeak-ng voice that phonemises the text ("espeak"."voice"), such
	// as "en-us".
	EspeakVoice string
	// Language is the voice's language code ("language"."code"), such as "en_US"; empty if
	// the config has none.
	Language string
	// SampleRate is the rate, in Hz, of the samples the model makes ("audio"."sample_rate").
	SampleRate int
	// HopLength is how many samples one frame of the model's durations lasts
	// ("audio"."hop_length"), or DefaultHopLength, VITS's, if the config does not say.
	HopLength int
	// Quality is the voice's quality ("audio"."quality"): "x_low", "low", "medium" or
	// "high"; empty if not given.
	Quality string
	// NumSpeakers is how many speakers the model has; over 1, it takes a speaker ID ("sid").
	NumSpeakers int
	// SpeakerIDs maps a speaker's name to its ID, for multi-speaker voices; may be empty.
	SpeakerIDs map[string]int64
	// NoiseScale, LengthScale and NoiseW are the model's "scales" input, in that order, from
	// the "inference" block, or Piper's defaults.
	NoiseScale, LengthScale, NoiseW float32
	// PhonemeIDs maps a phoneme (one code point, or a vowel cluster) to its IDs. It holds
	// the pad "_", the start "^" and the end "$".
	PhonemeIDs map[string][]int64
	// PhonemeMap replaces a phoneme by others before IDs are looked up ("phoneme_map");
	// may be empty.
	PhonemeMap map[rune][]rune
	// VowelClusters are runs of phonemes read as one ("vowel_clusters", such as "a" "ɪ" for
	// "aɪ"); may be empty.
	VowelClusters [][]string
}

// piperJSON is the part of a Piper voice config that Narrator reads.
type piperJSON struct {
	Audio *struct {
		SampleRate int    `json:"sample_rate"`
		Quality    string `json:"quality"`
		HopLength  int    `json:"hop_length"`
	} `json:"audio"`
	Espeak *struct {
		Voice string `json:"voice"`
	} `json:"espeak"`
	Language *struct {
		Code string `json:"code"`
	} `json:"language"`
	Inference *struct {
		NoiseScale  *float64 `json:"noise_scale"`
		LengthScale *float64 `json:"length_scale"`
		NoiseW      *float64 `json:"noise_w"`
	} `json:"inference"`
	PhonemeType   *string             `json:"phoneme_type"`
	PhonemeMap    map[string][]string `json:"phoneme_map"`
	PhonemeIDMap  map[string][]int64  `json:"phoneme_id_map"`
	NumSymbols    int                 `json:"num_symbols"`
	NumSpeakers   *int                `json:"num_speakers"`
	SpeakerIDMap  map[string]int64    `json:"speaker_id_map"`
	VowelClusters [][]string          `json:"vowel_clusters"`
}

// ParsePiperConfig parses and checks a Piper voice config (NAME.onnx.json). Only voices
// phonemised by espeak-ng ("phoneme_type": "espeak", the default) are supported; the error
// says what is wrong or missing.
func ParsePiperConfig(data []byte) (*PiperConfig, error) {
	var j piperJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&j); err != nil {
		return nil, fmt.Errorf("piper config: %w", err)
	}
	if j.PhonemeType != nil && *j.PhonemeType != "espeak" {
		return nil, fmt.Errorf("piper config: phoneme_type %q is not supported: only voices phonemised by espeak-ng (\"espeak\") are", *j.PhonemeType)
	}
	c := &PiperConfig{
		NoiseScale: DefaultNoiseScale, LengthScale: DefaultLengthScale, NoiseW: DefaultNoiseW,
		NumSpeakers: 1, SpeakerIDs: j.SpeakerIDMap, PhonemeIDs: make(map[string][]int64),
		PhonemeMap: make(map[rune][]rune), VowelClusters: j.VowelClusters,
	}
	if j.Espeak == nil || j.Espeak.Voice == "" {
		return nil, errors.New(`piper config: espeak.voice is missing`)
	}
	if err := checkVoice(j.Espeak.Voice); err != nil {
		return nil, fmt.Errorf("piper config: espeak.voice: %w", err)
	}
	c.EspeakVoice = j.Espeak.Voice
	if j.Language != nil {
		c.Language = j.Language.Code
	}
	if j.Audio == nil || j.Audio.SampleRate <= 0 || j.Audio.SampleRate > 192000 {
		return nil, errors.New("piper config: audio.sample_rate is missing or not a rate in Hz (1 to 192000)")
	}
	c.SampleRate, c.Quality, c.HopLength = j.Audio.SampleRate, j.Audio.Quality, j.Audio.HopLength
	if c.HopLength == 0 {
		c.HopLength = DefaultHopLength
	}
	if c.HopLength < 0 || c.HopLength > 1<<16 {
		return nil, fmt.Errorf("piper config: audio.hop_length %d is out of range", c.HopLength)
	}
	if in := j.Inference; in != nil {
		for _, s := range []struct {
			name string
			v    *float64
			dst  *float32
		}{{"noise_scale", in.NoiseScale, &c.NoiseScale}, {"length_scale", in.LengthScale, &c.LengthScale}, {"noise_w", in.NoiseW, &c.NoiseW}} {
			if s.v == nil {
				continue
			}
			if math.IsNaN(*s.v) || *s.v < 0 || *s.v > 10 || s.name == "length_scale" && *s.v == 0 {
				return nil, fmt.Errorf("piper config: inference.%s %g is out of range", s.name, *s.v)
			}
			*s.dst = float32(*s.v)
		}
	}
	if len(j.PhonemeIDMap) == 0 {
		return nil, errors.New("piper config: phoneme_id_map is missing")
	}
	maxID := int64(-1)
	for ph, ids := range j.PhonemeIDMap {
		if ph == "" || !utf8.ValidString(ph) || len(ids) == 0 {
			return nil, fmt.Errorf("piper config: phoneme_id_map entry %q: want a phoneme and at least one ID", ph)
		}
		for _, id := range ids {
			if id < 0 {
				return nil, fmt.Errorf("piper config: phoneme_id_map entry %q: negative ID %d", ph, id)
			}
			maxID = max(maxID, id)
		}
		c.PhonemeIDs[ph] = ids
	}
	for _, s := range []string{piperPad, piperBOS, piperEOS} {
		if _, ok := c.PhonemeIDs[s]; !ok {
			return nil, fmt.Errorf("piper config: phoneme_id_map has no %q", s)
		}
	}
	if j.NumSymbols > 0 && maxID >= int64(j.NumSymbols) {
		return nil, fmt.Errorf("piper config: phoneme_id_map has ID %d, but num_symbols is %d", maxID, j.NumSymbols)
	}
	for from, to := range j.PhonemeMap {
		r, size := utf8.DecodeRuneInString(from)
		if size == 0 || size != len(from) || r == utf8.RuneError {
			return nil, fmt.Errorf("piper config: phoneme_map key %q is not one code point", from)
		}
		var rs []rune
		for _, t := range to {
			tr, tsize := utf8.DecodeRuneInString(t)
			if tsize == 0 || tsize != len(t) || tr == utf8.RuneError {
				return nil, fmt.Errorf("piper config: phoneme_map[%q] holds %q, not one code point", from, t)
			}
			rs = append(rs, tr)
		}
		c.PhonemeMap[r] = rs
	}
	for _, vc := range j.VowelClusters {
		if len(vc) < 2 {
			return nil, fmt.Errorf("piper config: vowel cluster %q has fewer than two phonemes", vc)
		}
	}
	if j.NumSpeakers != nil {
		if *j.NumSpeakers < 1 {
			return nil, fmt.Errorf("piper config: num_speakers %d: want at least 1", *j.NumSpeakers)
		}
		c.NumSpeakers = *j.NumSpeakers
	}
	for name, id := range c.SpeakerIDs {
		if id < 0 || id >= int64(c.NumSpeakers) {
			return nil, fmt.Errorf("piper config: speaker %q has ID %d, outside 0 to num_speakers-1 (%d)", name, id, c.NumSpeakers-1)
		}
	}
	return c, nil
}

// Sentences turns clauses, from Phonemize with c.EspeakVoice, into the phonemes of each
// sentence, as piper-phonemize does: each clause's IPA decomposed (Unicode NFD, so "ç" is
// "c" and a combining cedilla), the voice's phoneme map applied, language-switch flags such
// as "(en)" removed, then its punctuation kept, followed by a space after ",", ":" and ";";
// a sentence ends after ".", "?", "!" and at the end of the text. Vowel clusters, if the
// voice has them, are then merged. Sentences without phonemes are left out.
func (c *PiperConfig) Sentences(clauses []Clause) [][]string {
	var sentences [][]string
	var cur []string
	for _, cl := range clauses {
		inFlag := false
		for _, r := range norm.NFD.String(cl.Phonemes) {
			mapped, ok := c.PhonemeMap[r]
			if !ok {
				mapped = []rune{r}
			}
			for _, m := range mapped {
				switch {
				case inFlag:
					inFlag = m != ')'
				case m == '(':
					inFlag = true
				default:
					cur = append(cur, string(m))
				}
			}
		}
		if cl.Punct != "" {
			cur = append(cur, cl.Punct)
			if cl.Punct == "," || cl.Punct == ":" || cl.Punct == ";" {
				cur = append(cur, " ")
			}
		}
		if cl.SentenceEnd {
			if len(cur) > 0 {
				sentences = append(sentences, c.mergeClusters(cur))
			}
			cur = nil
		}
	}
	if len(cur) > 0 {
		sentences = append(sentences, c.mergeClusters(cur))
	}
	return sentences
}

// mergeClusters merges the runs of phonemes that are vowel clusters into one, the longest
// first, as piper does.
func (c *PiperConfig) mergeClusters(phonemes []string) []string {
	if len(c.VowelClusters) == 0 {
		return phonemes
	}
	clusters := make(map[string]bool, len(c.VowelClusters))
	longest := 0
	for _, vc := range c.VowelClusters {
		clusters[strings.Join(vc, "\x00")] = true
		longest = max(longest, len(vc))
	}
	var out []string
	for i := 0; i < len(phonemes); {
		n := min(longest, len(phonemes)-i)
		for ; n > 1; n-- {
			if clusters[strings.Join(phonemes[i:i+n], "\x00")] {
				break
			}
		}
		if n > 1 {
			out = append(out, strings.Join(phonemes[i:i+n], ""))
			i += n
			continue
		}
		out = append(out, phonemes[i])
		i++
	}
	return out
}

// Symbols returns the IDs of the pad, the start and end marks, and the space of the voice's
// map: what is not a word's phoneme. Punctuation kept in a sentence's phonemes is neither a
// word's phoneme; punct tells it.
func (c *PiperConfig) Symbols() (pad, space map[int64]bool, punct map[int64]bool) {
	pad, space, punct = map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	for _, s := range []string{piperPad, piperBOS, piperEOS} {
		for _, id := range c.PhonemeIDs[s] {
			pad[id] = true
		}
	}
	for _, id := range c.PhonemeIDs[" "] {
		space[id] = true
	}
	for ph, ids := range c.PhonemeIDs {
		if ph == " " || ph == piperPad || ph == piperBOS || ph == piperEOS {
			continue
		}
		if strings.IndexFunc(ph, func(r rune) bool { return !unicode.IsPunct(r) }) < 0 {
			for _, id := range ids {
				punct[id] = true
			}
		}
	}
	return pad, space, punct
}

// IDs returns the model input of one sentence's phonemes, as piper-phonemize makes it: the
// IDs of "^", then of each phoneme followed by those of the pad "_", then of "$". Phonemes
// not in the ID map are left out.
func (c *PiperConfig) IDs(phonemes []string) []int64 {
	pad := c.PhonemeIDs[piperPad]
	ids := append([]int64{}, c.PhonemeIDs[piperBOS]...)
	ids = append(ids, pad...)
	for _, ph := range phonemes {
		m, ok := c.PhonemeIDs[ph]
		if !ok {
			continue
		}
		ids = append(ids, m...)
		ids = append(ids, pad...)
	}
	return append(ids, c.PhonemeIDs[piperEOS]...)
}

// Piper phonemises text with the voice's espeak-ng voice and returns the model input of each
// sentence: Phonemize, then Sentences, then IDs. The errors are Phonemize's.
func (p *Phonemizer) Piper(ctx context.Context, c *PiperConfig, text string) ([][]int64, error) {
	clauses, err := p.Phonemize(ctx, c.EspeakVoice, text)
	if err != nil {
		return nil, err
	}
	var out [][]int64
	for _, s := range c.Sentences(clauses) {
		out = append(out, c.IDs(s))
	}
	return out, nil
}
