package narrator

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// InstalledVoice is a neural voice that the operator installed (narrator voices install): its
// catalog entry and the files its engine needs. The files live in the media store and the
// entry in the database, so every node of a cluster offers the same voices.
type InstalledVoice struct {
	// Voice is the catalog entry. Its EngineVoice is the voice's ID, unique among installed
	// voices, such as "piper-en_US-amy-medium" or "kokoro-af_heart".
	Voice
	// Speaker is the speaker within the model: a multi-speaker Piper voice's speaker name, or
	// the Kokoro voice ("af_heart") whose style rows the voices file holds; "" for a
	// one-speaker Piper voice.
	Speaker string
	// Priority orders the voices of a language when the catalog picks its defaults: higher
	// first. Below zero, the voice is never a default.
	Priority int
	// Files are the engine's files: a model, and a Piper voice's config or a Kokoro model's
	// voices file.
	Files     []VoiceFile
	CreatedAt time.Time
}

// The roles of an installed voice's files.
const (
	VoiceFileModel  = "model"  // the ONNX model
	VoiceFileConfig = "config" // a Piper voice's NAME.onnx.json
	VoiceFileStyles = "styles" // a Kokoro model's voices file (npz archive or raw float32)
)

// VoiceFile is one file of an installed voice, kept in the media store under Key.
type VoiceFile struct {
	Role   string // VoiceFileModel, VoiceFileConfig or VoiceFileStyles
	Name   string // the file's name as installed, such as "en_US-amy-medium.onnx"
	Size   int64
	SHA256 string // lower-case hex
}

// VoiceFilePrefix is the media-store prefix of voice files. The media server never serves it.
const VoiceFilePrefix = "voices/"

// Key is the file's media-store key. Files are named by their content, so voices that share a
// model share its file.
func (f VoiceFile) Key() string { return VoiceFilePrefix + f.SHA256 }

// TimedModelSuffix ends the name of a model installed with its phonemes' durations as an
// output ("en_US-amy-medium.timed.onnx"): a Piper model's copy that gives them, or a Kokoro
// export that has them (a timestamped one). A voice whose model has none speaks with sentence
// timings only.
const TimedModelSuffix = ".timed.onnx"

// TimedModelName returns the name a model file named name is installed under: ending in
// TimedModelSuffix if timed (it gives its durations), and without it if not.
func TimedModelName(name string, timed bool) string {
	base := strings.TrimSuffix(strings.TrimSuffix(name, TimedModelSuffix), ".onnx")
	if timed {
		return base + TimedModelSuffix
	}
	return base + ".onnx"
}

// WordTimings reports whether the voice times each word of its transcripts: one whose model
// was installed with its durations (TimedModelSuffix). Other installed voices time sentences
// only.
func (v *InstalledVoice) WordTimings() bool {
	m, ok := v.File(VoiceFileModel)
	return ok && strings.HasSuffix(m.Name, TimedModelSuffix)
}

// File returns the voice's file of a role, and whether it has one.
func (v *InstalledVoice) File(role string) (VoiceFile, bool) {
	for _, f := range v.Files {
		if f.Role == role {
			return f, true
		}
	}
	return VoiceFile{}, false
}

var (
	localeRE  = regexp.MustCompile(`^[a-z]{2,3}_[A-Z]{2}$`)
	voiceIDRE = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,99}$`)
	// A voice's name stands in labels, URLs and media keys (its preview's).
	voiceNameRE = regexp.MustCompile(`^\p{L}[\p{L}\p{N} '-]{0,39}$`)
	sha256RE    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Qualities are the neural voice qualities, worst first.
var qualities = [...]string{"x_low", "low", "medium", "high"}

// Validate checks an installed voice's entry: a name that can stand in a label, a gender, a
// locale, a neural engine, an ID, a known quality, and the files its engine needs.
func (v *InstalledVoice) Validate() error {
	name := strings.TrimSpace(v.Name)
	switch {
	case name != v.Name || !voiceNameRE.MatchString(name):
		return Errorf(EINVALID, "voice name %q must be 1 to 40 letters, digits, spaces, hyphens or apostrophes, starting with a letter", v.Name)
	case v.Gender != GenderFemale && v.Gender != GenderMale:
		return Errorf(EINVALID, "voice %s: gender must be %s or %s", v.Name, GenderFemale, GenderMale)
	case !localeRE.MatchString(v.Language):
		return Errorf(EINVALID, "voice %s: language %q is not a locale such as en_US", v.Name, v.Language)
	case !Neural(v.Engine):
		return Errorf(EINVALID, "voice %s: engine %q is not %s or %s", v.Name, v.Engine, EnginePiper, EngineKokoro)
	case !voiceIDRE.MatchString(v.EngineVoice):
		return Errorf(EINVALID, "voice %s: ID %q must be lower-case letters, digits, '.', '_' and '-'", v.Name, v.EngineVoice)
	case v.Quality != "" && !slices.Contains(qualities[:], v.Quality):
		return Errorf(EINVALID, "voice %s: quality %q is not one of %s", v.Name, v.Quality, strings.Join(qualities[:], ", "))
	case len(v.License) > 200 || len(v.Speaker) > 100:
		return Errorf(EINVALID, "voice %s: licence or speaker too long", v.Name)
	case v.Engine == EngineKokoro && v.Speaker == "":
		return Errorf(EINVALID, "voice %s: a Kokoro voice names its speaker, such as af_heart", v.Name)
	}
	need := []string{VoiceFileModel, VoiceFileConfig}
	if v.Engine == EngineKokoro {
		need = []string{VoiceFileModel, VoiceFileStyles}
	}
	if len(v.Files) != len(need) {
		return Errorf(EINVALID, "voice %s: a %s voice has %d files (%s), not %d", v.Name, v.Engine, len(need), strings.Join(need, " and "), len(v.Files))
	}
	for _, role := range need {
		f, ok := v.File(role)
		if !ok {
			return Errorf(EINVALID, "voice %s: no %s file", v.Name, role)
		}
		if !sha256RE.MatchString(f.SHA256) || f.Size <= 0 || f.Name == "" || len(f.Name) > 200 {
			return Errorf(EINVALID, "voice %s: %s file %q needs a name, a size and a SHA-256", v.Name, role, f.Name)
		}
	}
	return nil
}

// build returns the digest of the voice's files and speaker (Voice.Build).
func (v *InstalledVoice) build() string {
	h := sha256.New()
	for _, f := range v.Files {
		fmt.Fprintf(h, "%s:%s;", f.Role, f.SHA256)
	}
	fmt.Fprintf(h, "speaker:%s", v.Speaker)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// rank orders voices for the catalog's defaults: Kokoro, then Piper by quality, then the
// built-in voices.
func (v Voice) rank() int {
	switch v.Engine {
	case EngineKokoro:
		return len(qualities) + 1
	case EnginePiper:
		return slices.Index(qualities[:], v.Quality) + 1
	}
	return 0
}

// Catalog is the set of voices a server offers: the built-in voices and the installed ones,
// with each language's default title and body voice. It is immutable; a server makes a new
// one when the installed voices change.
type Catalog struct {
	voices   []Voice // by language, then name
	defaults map[string][2]Voice
	timed    map[string]bool // the IDs of the installed voices that time words
}

// WordTimings reports whether a voice of the catalog times each word of its transcripts:
// festival's and flite's voices, and the installed voices whose WordTimings says so. The
// others time sentences only.
func (c *Catalog) WordTimings(v Voice) bool {
	switch v.Engine {
	case EngineFestival, EngineFlite:
		return true
	}
	return c.timed[v.EngineVoice]
}

// builtin is the catalog of the built-in voices.
var builtin = NewCatalog(nil)

// BuiltinCatalog returns the catalog of the built-in voices alone.
func BuiltinCatalog() *Catalog { return builtin }

// NewCatalog returns the catalog of the built-in voices and installed. An installed voice
// whose name a built-in voice of its language has, or an earlier installed one, is left out.
// A language's defaults are its built-in defaults unless it has installed voices of priority
// zero or more: then the best of them (by priority, then engine and quality, then name) speaks
// the bodies, and the next best, if there is one, the titles.
func NewCatalog(installed []*InstalledVoice) *Catalog {
	c := &Catalog{voices: slices.Clone(catalog[:]), defaults: map[string][2]Voice{}, timed: map[string]bool{}}
	taken := map[string]bool{}
	for _, v := range c.voices {
		taken[v.Language+"/"+strings.ToLower(v.Name)] = true
	}
	for _, d := range defaults {
		t, _ := c.lookup(d.language, d.title)
		b, _ := c.lookup(d.language, d.body)
		c.defaults[d.language] = [2]Voice{t, b}
	}
	candidates := map[string][]*InstalledVoice{}
	for _, v := range installed {
		key := v.Language + "/" + strings.ToLower(v.Name)
		if taken[key] {
			continue
		}
		taken[key] = true
		voice := v.Voice
		voice.Build = v.build()
		c.voices = append(c.voices, voice)
		c.timed[v.EngineVoice] = v.WordTimings()
		if v.Priority >= 0 {
			candidates[v.Language] = append(candidates[v.Language], v)
		}
	}
	slices.SortFunc(c.voices, func(a, b Voice) int {
		return cmp.Or(cmp.Compare(a.Language, b.Language), cmp.Compare(a.Name, b.Name))
	})
	for lang, vs := range candidates {
		slices.SortFunc(vs, func(a, b *InstalledVoice) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(b.rank(), a.rank()), cmp.Compare(a.Name, b.Name))
		})
		body, _ := c.lookup(lang, vs[0].Name)
		title := body
		if len(vs) > 1 {
			title, _ = c.lookup(lang, vs[1].Name)
		}
		c.defaults[lang] = [2]Voice{title, body}
	}
	return c
}

// Voices returns a copy of the catalog's voices, sorted by language, then name.
func (c *Catalog) Voices() []Voice { return slices.Clone(c.voices) }

// Languages returns the locales a project may choose, sorted. Each has a default title voice
// and a default body voice.
func (c *Catalog) Languages() []string {
	out := make([]string, 0, len(c.defaults))
	for lang := range c.defaults {
		out = append(out, lang)
	}
	slices.Sort(out)
	return out
}

// Lookup finds a voice of language by its name ("Sally") or its label ("Sally (Female)"),
// ignoring case and surrounding space. It only finds voices of that language.
func (c *Catalog) Lookup(language, name string) (Voice, bool) { return c.lookup(language, name) }

func (c *Catalog) lookup(language, name string) (Voice, bool) {
	name = strings.TrimSpace(name)
	for _, v := range c.voices {
		if v.Language == language && (strings.EqualFold(v.Name, name) || strings.EqualFold(v.Label(), name)) {
			return v, true
		}
	}
	return Voice{}, false
}

// Defaults returns language's default title and body voices. ok is false if the language is
// not offered.
func (c *Catalog) Defaults(language string) (title, body Voice, ok bool) {
	d, ok := c.defaults[language]
	return d[0], d[1], ok
}

// Resolve returns the voice a project's name stands for: the named voice of the language if
// the catalog has it, else the language's default for the role (title or body), with
// fellBack true, as when the operator removed the voice the project chose. ok is false if
// the language is not offered at all.
func (c *Catalog) Resolve(language, name string, title bool) (v Voice, fellBack, ok bool) {
	if v, ok := c.lookup(language, name); ok {
		return v, false, true
	}
	t, b, ok := c.Defaults(language)
	if title {
		return t, ok, ok
	}
	return b, ok, ok
}

// CheckProject checks that a project's language is offered and both its voices belong to
// that language. Project.Validate checks the rest of the project.
func (c *Catalog) CheckProject(p *Project) error {
	if _, _, ok := c.Defaults(p.Language); !ok {
		return Errorf(EINVALID, "language %q is not supported; run `narrator voices` for the list", p.Language)
	}
	for _, v := range []struct{ field, name string }{{"title_voice", p.TitleVoice}, {"body_voice", p.BodyVoice}} {
		if _, ok := c.lookup(p.Language, v.name); !ok {
			return Errorf(EINVALID, "%s %q is not a voice of language %s", v.field, v.name, p.Language)
		}
	}
	return nil
}

// CheckInstall checks that an installed voice may join the catalog: its entry is valid and
// no voice of its language already has its name.
func (c *Catalog) CheckInstall(v *InstalledVoice) error {
	if err := v.Validate(); err != nil {
		return err
	}
	if _, ok := c.lookup(v.Language, v.Name); ok {
		return Errorf(ECONFLICT, "language %s already has a voice named %s; choose another name with --name", v.Language, v.Name)
	}
	return nil
}

// FindInstalledVoice returns the voice of voices whose ID is id, or ENOTFOUND.
func FindInstalledVoice(voices []*InstalledVoice, id string) (*InstalledVoice, error) {
	for _, v := range voices {
		if v.EngineVoice == id {
			return v, nil
		}
	}
	return nil, Errorf(ENOTFOUND, "no installed voice has the ID %q; run `narrator voices` for the list", id)
}

// UnusedVoiceFiles returns the files of removed that no voice of left uses: those to delete
// from the media store once removed is gone.
func UnusedVoiceFiles(removed *InstalledVoice, left []*InstalledVoice) []VoiceFile {
	used := map[string]bool{}
	for _, v := range left {
		for _, f := range v.Files {
			used[f.SHA256] = true
		}
	}
	var out []VoiceFile
	for _, f := range removed.Files {
		if !used[f.SHA256] {
			out = append(out, f)
			used[f.SHA256] = true
		}
	}
	return out
}
