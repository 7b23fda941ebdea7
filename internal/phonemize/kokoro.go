package phonemize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// KokoroMaxTokens is the most tokens a Kokoro model reads at once, besides the 0 that pads
// them at each end: its context is 512.
const KokoroMaxTokens = 510

// KokoroSampleRate is the rate, in Hz, of the samples Kokoro models make.
const KokoroSampleRate = 24000

// kokoroVocabV1 is the vocabulary of Kokoro v1.0 (its config.json's "vocab", as kokoro-onnx
// ships it): a phoneme or punctuation mark and its token.
var kokoroVocabV1 = map[rune]int64{
	';': 1, ':': 2, ',': 3, '.': 4, '!': 5, '?': 6, '—': 9, '…': 10, '"': 11, '(': 12, ')': 13,
	'“': 14, '”': 15, ' ': 16, '\u0303': 17, 'ʣ': 18, 'ʥ': 19, 'ʦ': 20, 'ʨ': 21, 'ᵝ': 22,
	'\uAB67': 23, 'A': 24, 'I': 25, 'O': 31, 'Q': 33, 'S': 35, 'T': 36, 'W': 39, 'Y': 41,
	'ᵊ': 42, 'a': 43, 'b': 44, 'c': 45, 'd': 46, 'e': 47, 'f': 48, 'h': 50, 'i': 51, 'j': 52,
	'k': 53, 'l': 54, 'm': 55, 'n': 56, 'o': 57, 'p': 58, 'q': 59, 'r': 60, 's': 61, 't': 62,
	'u': 63, 'v': 64, 'w': 65, 'x': 66, 'y': 67, 'z': 68, 'ɑ': 69, 'ɐ': 70, 'ɒ': 71, 'æ': 72,
	'β': 75, 'ɔ': 76, 'ɕ': 77, 'ç': 78, 'ɖ': 80, 'ð': 81, 'ʤ': 82, 'ə': 83, 'ɚ': 85, 'ɛ': 86,
	'ɜ': 87, 'ɟ': 90, 'ɡ': 92, 'ɥ': 99, 'ɨ': 101, 'ɪ': 102, 'ʝ': 103, 'ɯ': 110, 'ɰ': 111,
	'ŋ': 112, 'ɳ': 113, 'ɲ': 114, 'ɴ': 115, 'ø': 116, 'ɸ': 118, 'θ': 119, 'œ': 120, 'ɹ': 123,
	'ɾ': 125, 'ɻ': 126, 'ʁ': 128, 'ɽ': 129, 'ʂ': 130, 'ʃ': 131, 'ʈ': 132, 'ʧ': 133, 'ʊ': 135,
	'ʋ': 136, 'ʌ': 138, 'ɣ': 139, 'ɤ': 140, 'χ': 142, 'ʎ': 143, 'ʒ': 147, 'ʔ': 148, 'ˈ': 156,
	'ˌ': 157, 'ː': 158, 'ʰ': 162, 'ʲ': 164, '↓': 169, '→': 171, '↗': 172, '↘': 173, 'ᵻ': 177,
}

// KokoroVocab returns the vocabulary of Kokoro v1.0 models, a fresh copy.
func KokoroVocab() map[rune]int64 {
	v := make(map[rune]int64, len(kokoroVocabV1))
	for r, id := range kokoroVocabV1 {
		v[r] = id
	}
	return v
}

// KokoroSymbols returns the tokens of a Kokoro vocabulary (nil means KokoroVocab()) that are
// no word's phonemes: pad (0, which pads each chunk), space (' ', between words) and punct
// (its punctuation marks).
func KokoroSymbols(vocab map[rune]int64) (pad, space, punct map[int64]bool) {
	if vocab == nil {
		vocab = kokoroVocabV1
	}
	pad, space, punct = map[int64]bool{0: true}, map[int64]bool{}, map[int64]bool{}
	for r, id := range vocab {
		switch {
		case r == ' ':
			space[id] = true
		case unicode.IsPunct(r):
			punct[id] = true
		}
	}
	return pad, space, punct
}

// ParseKokoroVocab reads the vocabulary from a Kokoro config.json ({"vocab": {"a": 43, …}},
// other fields ignored): each key one code point, each token from 1 to 511 (0 pads).
func ParseKokoroVocab(data []byte) (map[rune]int64, error) {
	var c struct {
		Vocab map[string]int64 `json:"vocab"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("kokoro config: %w", err)
	}
	if len(c.Vocab) == 0 {
		return nil, errors.New("kokoro config: vocab is missing or empty")
	}
	v := make(map[rune]int64, len(c.Vocab))
	for s, id := range c.Vocab {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || size != len(s) || r == utf8.RuneError {
			return nil, fmt.Errorf("kokoro config: vocab key %q is not one code point", s)
		}
		if id < 1 || id > 511 {
			return nil, fmt.Errorf("kokoro config: vocab[%q] = %d: want a token from 1 to 511", s, id)
		}
		v[r] = id
	}
	return v, nil
}

// ErrNoPhonemizer is returned, wrapped, by ParseKokoroVoice for a voice whose language
// eSpeak NG cannot phonemise for Kokoro: Japanese and Mandarin, which need other G2P.
var ErrNoPhonemizer = errors.New("no phonemiser for the language")

// KokoroVoice is what a Kokoro voice's name says about it.
type KokoroVoice struct {
	// Language is Narrator's language code, such as "en_US".
	Language string
	// Female is true for a female voice, false for a male one.
	Female bool
	// EspeakVoice is the espeak-ng voice that phonemises the text for it, as kokoro-onnx
	// names it ("en-us", "fr-fr", …); empty if espeak-ng cannot.
	EspeakVoice string
}

// kokoroLanguages maps the first letter of a Kokoro voice name to its language and espeak-ng
// voice.
var kokoroLanguages = map[byte]struct{ language, espeak string }{
	'a': {"en_US", "en-us"},
	'b': {"en_GB", "en-gb"},
	'e': {"es_ES", "es"},
	'f': {"fr_FR", "fr-fr"},
	'h': {"hi_IN", "hi"},
	'i': {"it_IT", "it"},
	'p': {"pt_BR", "pt-br"},
	'j': {"ja_JP", ""},
	'z': {"zh_CN", ""},
}

// ParseKokoroVoice reads a Kokoro voice name such as "af_heart": its first letter is the
// language (a American English, b British English, e Spanish, f French, h Hindi, i Italian,
// p Brazilian Portuguese, j Japanese, z Mandarin), its second the gender (f or m), then "_"
// and a name. For Japanese and Mandarin voices it returns what the name says and an error
// that matches ErrNoPhonemizer.
func ParseKokoroVoice(name string) (KokoroVoice, error) {
	if len(name) < 4 || name[2] != '_' || (name[1] != 'f' && name[1] != 'm') {
		return KokoroVoice{}, fmt.Errorf("kokoro voice %q: want a name such as af_heart (language, gender f or m, _, name)", name)
	}
	l, ok := kokoroLanguages[name[0]]
	if !ok {
		return KokoroVoice{}, fmt.Errorf("kokoro voice %q: unknown language prefix %q", name, name[:1])
	}
	v := KokoroVoice{Language: l.language, Female: name[1] == 'f', EspeakVoice: l.espeak}
	if v.EspeakVoice == "" {
		return v, fmt.Errorf("kokoro voice %q (%s): %w: it needs another G2P than espeak-ng", name, v.Language, ErrNoPhonemizer)
	}
	return v, nil
}

// kokoroMarks is the punctuation that kokoro-onnx's phonemiser (the phonemizer package,
// preserve_punctuation) takes out of the text before espeak-ng reads it and puts back after,
// with the spaces around it.
var kokoroMarks = regexp.MustCompile(`(\s*[;:,.!?¡¿—…"«»“”(){}\[\]]+\s*)+`)

// Kokoro phonemises text for a Kokoro voice whose espeak-ng voice is espeakVoice, as
// kokoro-onnx does: the text, trimmed, is cut at its punctuation; espeak-ng reads each piece
// between (stress kept, clauses joined by spaces); the punctuation is put back with the
// spaces around it; what vocab lacks is dropped, and the result trimmed. Line breaks are
// read as spaces. A nil vocab means KokoroVocab(). The errors are Phonemize's.
//
// kokoro-onnx once rewrote the phonemes for its v0.19 vocabulary ("r" to "ɹ", "x" to "k",
// "ʲ" to "j", "ɬ" to "l", and a few English fixes); it dropped the rewriting for v1.0's, which
// has those symbols, and so does Kokoro.
func (p *Phonemizer) Kokoro(ctx context.Context, espeakVoice, text string, vocab map[rune]int64) (string, error) {
	if err := checkVoice(espeakVoice); err != nil {
		return "", err
	}
	if vocab == nil {
		vocab = kokoroVocabV1
	}
	text = strings.TrimSpace(clean(text))
	if text == "" {
		return "", nil
	}
	pieces, marks := splitMarks(text)
	read := make([]string, len(pieces))
	if len(pieces) > 0 {
		answers, err := p.run(ctx, espeakVoice, pieces)
		if err != nil {
			return "", err
		}
		words := make([][]string, len(pieces))
		for i, a := range answers {
			for _, clause := range a {
				words[i] = append(words[i], strings.Fields(clause.ipa)...)
			}
		}
		for i, w := range words {
			if len(w) > 0 {
				// Each word is followed by a space, as the phonemizer leaves it.
				read[i] = strings.Join(w, " ") + " "
			}
		}
	}
	kept := strings.Map(func(r rune) rune {
		if _, ok := vocab[r]; ok {
			return r
		}
		return -1
	}, restoreMarks(read, marks))
	return strings.TrimSpace(kept), nil
}

// kokoroMark is a run of punctuation in a text that Kokoro phonemises, and where it stands.
type kokoroMark struct {
	text     string
	position byte // B: begins the text, E: ends it, I: inside, A: is all of it
}

// splitMarks cuts text at its punctuation (kokoroMarks) into the pieces between, for
// espeak-ng to read, and the punctuation, to put back with restoreMarks.
func splitMarks(text string) (pieces []string, marks []kokoroMark) {
	matches := kokoroMarks.FindAllStringIndex(text, -1)
	switch {
	case len(matches) == 0:
		return []string{text}, nil
	case len(matches) == 1 && matches[0][0] == 0 && matches[0][1] == len(text):
		return nil, []kokoroMark{{text, 'A'}}
	}
	prev := 0
	for i, m := range matches {
		pos := byte('I')
		if i == 0 && m[0] == 0 {
			pos = 'B'
		} else if i == len(matches)-1 && m[1] == len(text) {
			pos = 'E'
		}
		marks = append(marks, kokoroMark{text[m[0]:m[1]], pos})
		if m[0] > prev {
			pieces = append(pieces, text[prev:m[0]])
		}
		prev = m[1]
	}
	if prev < len(text) {
		pieces = append(pieces, text[prev:])
	}
	return pieces, marks
}

// restoreMarks puts the punctuation back between the pieces as read, as the phonemizer's
// Punctuation.restore does for one line. It consumes read.
func restoreMarks(read []string, marks []kokoroMark) string {
	var out strings.Builder
	for len(marks) > 0 && len(read) > 0 {
		m := marks[0]
		marks = marks[1:]
		read[0] = strings.TrimSuffix(read[0], " ")
		switch m.position {
		case 'B':
			read[0] = m.text + read[0]
		case 'E':
			out.WriteString(read[0] + m.text)
			if !strings.HasSuffix(m.text, " ") {
				out.WriteString(" ")
			}
			read = read[1:]
		default:
			if len(read) == 1 {
				read[0] += m.text
			} else {
				read = append([]string{read[0] + m.text + read[1]}, read[2:]...)
			}
		}
	}
	for _, r := range read {
		out.WriteString(r)
	}
	for _, m := range marks {
		out.WriteString(m.text)
	}
	return out.String()
}

// KokoroTokens turns phonemes, from Kokoro, into the model's input: chunks of at most
// KokoroMaxTokens tokens, each padded with 0 at both ends (so the style row of a chunk is
// len(chunk)-2). Like kokoro-onnx, it cuts the phonemes after ". , ! ? ;" and packs the
// pieces into as few chunks as fit; a piece too long for one chunk is cut at spaces, or
// anywhere if it has none, where kokoro-onnx would drop its end. Phonemes not in vocab (nil
// means KokoroVocab()) are left out.
func KokoroTokens(phonemes string, vocab map[rune]int64) [][]int64 {
	if vocab == nil {
		vocab = kokoroVocabV1
	}
	var rs []rune
	for _, r := range phonemes {
		if _, ok := vocab[r]; ok {
			rs = append(rs, r)
		}
	}
	// Parts as kokoro-onnx's _split_phonemes makes them: text between the marks, trimmed,
	// and the marks alone.
	var parts []string
	start := 0
	for i, r := range rs {
		if strings.ContainsRune(".,!?;", r) {
			parts = append(parts, strings.TrimSpace(string(rs[start:i])), string(r))
			start = i + 1
		}
	}
	parts = append(parts, strings.TrimSpace(string(rs[start:])))
	var batches []string
	cur := ""
	for _, part := range parts {
		for _, piece := range splitLong(part, KokoroMaxTokens-1) {
			if piece == "" {
				continue
			}
			n, m := utf8.RuneCountInString(cur), utf8.RuneCountInString(piece)
			switch {
			case n+m+1 >= KokoroMaxTokens:
				if cur != "" {
					batches = append(batches, strings.TrimSpace(cur))
				}
				cur = piece
			case strings.Contains(".,!?;", piece) && len(piece) == 1:
				cur += piece
			default:
				if cur != "" {
					cur += " "
				}
				cur += piece
			}
		}
	}
	if cur = strings.TrimSpace(cur); cur != "" {
		batches = append(batches, cur)
	}
	chunks := make([][]int64, 0, len(batches))
	for _, b := range batches {
		chunk := []int64{0}
		for _, r := range b {
			chunk = append(chunk, vocab[r])
		}
		chunks = append(chunks, append(chunk, 0))
	}
	return chunks
}

// splitLong cuts s into pieces of at most n runes, at spaces where it can.
func splitLong(s string, n int) []string {
	var out []string
	for utf8.RuneCountInString(s) > n {
		rs := []rune(s)
		cut := n
		for cut > 0 && rs[cut] != ' ' {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, strings.TrimSpace(string(rs[:cut])))
		s = strings.TrimSpace(string(rs[cut:]))
	}
	return append(out, s)
}
