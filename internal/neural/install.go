package neural

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/onnx/worker"
	"github.com/narrator/narrator/internal/phonemize"
)

// Describe are what the operator says of a voice where its files do not: flags of
// narrator voices install. Empty fields are read from the files.
type Describe struct {
	Name     string // the catalog name; a Piper voice's dataset name ("Amy"), a Kokoro voice's ("Heart")
	Gender   string // narrator.GenderFemale or GenderMale; a Kokoro voice's name says it
	Language string // a locale; a Piper config or a Kokoro voice's name says it
	Speaker  string // a multi-speaker Piper voice's speaker; Kokoro: install only this voice
	License  string // read from a model card otherwise
	Priority int
}

// LocalFile is a voice file on local disk, with its checksum.
type LocalFile struct {
	Path string
	narrator.VoiceFile
}

// HashFile reads a file for installing: its size and SHA-256.
func HashFile(path, role string) (LocalFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return LocalFile{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return LocalFile{}, err
	}
	if !info.Mode().IsRegular() || info.Size() == 0 {
		return LocalFile{}, fmt.Errorf("%s is not a file with content", path)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return LocalFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	return LocalFile{Path: path, VoiceFile: narrator.VoiceFile{Role: role, Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}}, nil
}

// Inspect starts a worker for model (see worker.Config: Command, Library, Sandbox) and returns
// the model's kind and signature, or why onnxruntime refuses it.
func Inspect(ctx context.Context, cfg worker.Config) (worker.Kind, worker.Info, error) {
	cfg.Workers, cfg.Runs = 1, 1
	p, err := worker.New(cfg)
	if err != nil {
		return "", worker.Info{}, err
	}
	defer p.Close()
	return p.Info(ctx)
}

var piperNameRE = regexp.MustCompile(`^([a-z]{2,3}_[A-Z]{2})-([A-Za-z0-9_]+)-(x_low|low|medium|high)$`)

// PiperEntry returns the catalog entry of a Piper voice: its model (whose signature is sig)
// and its config, described by d where they do not say. The voice's ID is "piper-" and the
// model's file name, lower-cased, without ".onnx".
func PiperEntry(model, config LocalFile, sig worker.PiperSignature, d Describe) (*narrator.InstalledVoice, error) {
	b, err := os.ReadFile(config.Path)
	if err != nil {
		return nil, err
	}
	c, err := phonemize.ParsePiperConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.Name, err)
	}
	if _, err := PiperSpeaker(c, sig, d.Speaker); err != nil {
		return nil, fmt.Errorf("%s and %s: %w", model.Name, config.Name, err)
	}
	base := strings.TrimSuffix(model.Name, ".onnx")
	v := &narrator.InstalledVoice{
		Voice: narrator.Voice{
			Name: d.Name, Gender: d.Gender, Language: d.Language, Engine: narrator.EnginePiper,
			EngineVoice: PiperID(base), Quality: c.Quality, License: d.License,
		},
		Speaker:  d.Speaker,
		Priority: d.Priority,
		Files:    []narrator.VoiceFile{model.VoiceFile, config.VoiceFile},
	}
	m := piperNameRE.FindStringSubmatch(base)
	if v.Language == "" {
		v.Language = c.Language
	}
	if v.Language == "" && m != nil {
		v.Language = m[1]
	}
	if v.Name == "" && m != nil {
		v.Name = title(m[2])
		if d.Speaker != "" {
			v.Name = title(d.Speaker)
		}
	}
	if d.Speaker != "" {
		v.EngineVoice += "-" + idPart(d.Speaker)
	}
	if v.Quality == "" && m != nil {
		v.Quality = m[3]
	}
	switch {
	case v.Name == "":
		return nil, fmt.Errorf("the file name %s does not say the voice's name: give --name", model.Name)
	case v.Language == "":
		return nil, fmt.Errorf("%s does not say the voice's language: give --language, such as en_US", config.Name)
	case v.Gender == "":
		return nil, errors.New("a Piper voice's files do not say its gender: give --gender female or --gender male")
	}
	return v, v.Validate()
}

// KokoroEntries returns the catalog entries of a Kokoro model and its voices file: one for
// every voice of the file whose language Narrator can phonemise (or only d.Speaker's), named
// after the voice ("af_heart" is Heart, American English, female) unless d names the one.
// Each voice's ID is "kokoro-" and its name in the file. skipped lists the voices left out,
// and why.
func KokoroEntries(model, voices LocalFile, d Describe) (entries []*narrator.InstalledVoice, skipped []string, err error) {
	styles, err := ReadStyles(voices.Path, voices.Name)
	if err != nil {
		return nil, nil, err
	}
	names := styles.Names()
	if d.Speaker != "" {
		if _, ok := styles[d.Speaker]; !ok {
			return nil, nil, fmt.Errorf("%s has no voice %s; it has %s", voices.Name, d.Speaker, strings.Join(names, ", "))
		}
		names = []string{d.Speaker}
	}
	for _, name := range names {
		kv, err := phonemize.ParseKokoroVoice(name)
		if err != nil || kv.EspeakVoice == "" {
			why := "Narrator has no phonemiser for its language"
			if err != nil {
				why = err.Error()
			}
			skipped = append(skipped, name+": "+why)
			continue
		}
		v := &narrator.InstalledVoice{
			Voice: narrator.Voice{
				Name: title(name[3:]), Gender: narrator.GenderMale, Language: kv.Language, Engine: narrator.EngineKokoro,
				EngineVoice: "kokoro-" + idPart(name), License: d.License,
			},
			Speaker:  name,
			Priority: d.Priority,
			Files:    []narrator.VoiceFile{model.VoiceFile, voices.VoiceFile},
		}
		if kv.Female {
			v.Gender = narrator.GenderFemale
		}
		if d.Speaker != "" {
			v.Name = cmp.Or(d.Name, v.Name)
			v.Gender = cmp.Or(d.Gender, v.Gender)
			v.Language = cmp.Or(d.Language, v.Language)
		}
		if err := v.Validate(); err != nil {
			return nil, nil, err
		}
		entries = append(entries, v)
	}
	if len(entries) == 0 {
		return nil, skipped, fmt.Errorf("%s has no voice of a language Narrator can phonemise (%s)", voices.Name, strings.Join(skipped, "; "))
	}
	return entries, skipped, nil
}

// ModelCardLicense returns the licence a Piper model card states ("License: MIT", or the line
// after a "## License" heading), or "".
func ModelCardLicense(r io.Reader) string {
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	heading := false
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(sc.Text()), "*-"))
		low := strings.ToLower(line)
		switch {
		case strings.HasPrefix(low, "license:") || strings.HasPrefix(low, "licence:"):
			return clip(strings.TrimSpace(line[len("license:"):]))
		case strings.HasPrefix(low, "#") && strings.Contains(low, "licen"):
			heading = true
		case heading && line != "":
			return clip(line)
		}
	}
	return ""
}

// clip keeps a licence to what an entry holds.
func clip(s string) string {
	if r := []rune(s); len(r) > 100 {
		return string(r[:100])
	}
	return s
}

// idPart makes s fit in a voice ID: lower-case letters, digits, '.', '_' and '-'.
// PiperID returns the ID a Piper voice installs under, from its name (its model's file name
// without ".onnx", such as en_US-lessac-medium).
func PiperID(name string) string { return "piper-" + idPart(name) }

func idPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return unicode.ToLower(r)
		}
		return '-'
	}, s)
}

// title makes a voice name of a file's word: "amy" is "Amy", "libritts_r" "Libritts R".
func title(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}
