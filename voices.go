package narrator

import "strings"

// Voice is one entry of the voice catalog. (Placeholder; the engine work replaces the catalog.)
type Voice struct {
	Name, Gender, Language, Engine, EngineVoice string
}

// Label returns the voice as the v3 API shows it: "Name (Gender)".
func (v Voice) Label() string { return v.Name + " (" + v.Gender + ")" }

var catalog = []Voice{
	{"Sally", "Female", "en_US", "espeak", "en-us+f3"},
	{"Mark", "Male", "en_US", "espeak", "en-us+m3"},
}

// Voices returns the whole catalog.
func Voices() []Voice { return append([]Voice(nil), catalog...) }

// LookupVoice finds a voice of a language by name or label.
func LookupVoice(language, name string) (Voice, bool) {
	for _, v := range catalog {
		if v.Language == language && (strings.EqualFold(v.Name, name) || strings.EqualFold(v.Label(), name)) {
			return v, true
		}
	}
	return Voice{}, false
}

// DefaultVoices returns a language's default title and body voices.
func DefaultVoices(language string) (title, body Voice, ok bool) {
	if language == "en_US" {
		return catalog[1], catalog[0], true
	}
	return Voice{}, Voice{}, false
}
