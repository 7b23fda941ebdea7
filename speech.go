package narrator

import (
	"slices"
	"strings"
	"time"
)

// The OpenAI speech convention (POST /v1/audio/speech), which other apps
// speak to Narrator with.
const (
	// MaxSpeechInput is the most characters a speech request's input may
	// hold: OpenAI's own limit.
	MaxSpeechInput = 4096
	// MinSpeechSpeed and MaxSpeechSpeed bound a speech request's speed, a
	// speaking-rate factor: OpenAI's bounds, which every engine honours.
	MinSpeechSpeed = 0.25
	MaxSpeechSpeed = 4.0
	// SpeechBurst speech requests of one API key may come at once, then
	// one per SpeechEvery.
	SpeechBurst = 20
	SpeechEvery = 3 * time.Second
)

// Speech formats: what a speech request's response_format may name.
const (
	SpeechMP3 = "mp3"
	SpeechWAV = "wav"
	// SpeechPCM is raw 16-bit signed little-endian mono samples at
	// SpeechPCMRate, with no header, as OpenAI sends it.
	SpeechPCM = "pcm"
)

// SpeechPCMRate is the sample rate of SpeechPCM, OpenAI's.
const SpeechPCMRate = 24000

// SpeechFormats are the formats a speech request may ask for. OpenAI's
// opus, aac and flac are not offered: no encoder the service runs makes
// them.
var speechFormats = []string{SpeechMP3, SpeechWAV, SpeechPCM}

// SpeechFormats returns the response formats a speech request may ask for.
func SpeechFormats() []string { return slices.Clone(speechFormats) }

// SpeechModels returns the model names a speech request may give: Narrator's
// own and OpenAI's, which all speak the same way.
func SpeechModels() []string {
	return []string{"narrator", "tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15"}
}

// speechAliases are OpenAI's voice names with the gender each is taken to
// be, in the order they take a language's voices of that gender.
var speechAliases = []struct{ name, gender string }{
	{"alloy", GenderFemale}, {"ash", GenderMale}, {"coral", GenderFemale},
	{"echo", GenderMale}, {"fable", GenderMale}, {"nova", GenderFemale},
	{"onyx", GenderMale}, {"sage", GenderFemale}, {"shimmer", GenderFemale},
	// OpenAI's later voices come after, so that the first ones keep
	// their voices.
	{"ballad", GenderMale}, {"verse", GenderMale}, {"marin", GenderFemale}, {"cedar", GenderMale},
}

// SpeechVoiceID is the ID a voice has in the speech convention: its
// language and name, "en_US/Sally". Names are unique only within a
// language.
func SpeechVoiceID(v Voice) string { return v.Language + "/" + v.Name }

// SpeechVoice finds the voice a speech request names, for a project of
// language: a voice's ID (SpeechVoiceID, or an installed voice's own ID),
// its name or label in language, then in any language; or one of OpenAI's
// voice names (alloy, ash, coral, echo, fable, nova, onyx, sage, shimmer,
// ballad, verse, marin, cedar),
// an alias for a voice of language. Each alias has a gender; the k-th
// alias of a gender, in that order, speaks with the k-th voice of that
// gender in language (its default voices first, then the rest by name),
// wrapping round; a language with no voice of that gender lends its
// others. ok is false if nothing matches.
func (c *Catalog) SpeechVoice(language, name string) (v Voice, ok bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Voice{}, false
	}
	if lang, n, found := strings.Cut(name, "/"); found {
		return c.lookup(lang, n)
	}
	if v, ok := c.lookup(language, name); ok {
		return v, true
	}
	for _, v := range c.voices {
		if Neural(v.Engine) && v.EngineVoice == name {
			return v, true
		}
	}
	for _, v := range c.voices {
		if strings.EqualFold(v.Name, name) || strings.EqualFold(v.Label(), name) {
			return v, true
		}
	}
	alias := slices.IndexFunc(speechAliases, func(a struct{ name, gender string }) bool { return strings.EqualFold(a.name, name) })
	if alias < 0 {
		return Voice{}, false
	}
	gender := speechAliases[alias].gender
	k := 0
	for _, a := range speechAliases[:alias] {
		if a.gender == gender {
			k++
		}
	}
	voices := c.speechOrder(language, gender)
	if len(voices) == 0 {
		voices = c.speechOrder(language, "")
	}
	if len(voices) == 0 {
		return Voice{}, false
	}
	return voices[k%len(voices)], true
}

// speechOrder returns language's voices of gender (any if ""): its
// default body voice, its default title voice, then the rest by name.
func (c *Catalog) speechOrder(language, gender string) []Voice {
	title, body, _ := c.Defaults(language)
	var out []Voice
	add := func(v Voice) {
		if v.Language == language && (gender == "" || v.Gender == gender) &&
			!slices.ContainsFunc(out, func(o Voice) bool { return o.Name == v.Name }) {
			out = append(out, v)
		}
	}
	add(body)
	add(title)
	for _, v := range c.voices {
		add(v)
	}
	return out
}

// SpeechAliases returns OpenAI's voice names, which SpeechVoice maps to a
// language's voices.
func SpeechAliases() []string {
	out := make([]string, len(speechAliases))
	for i, a := range speechAliases {
		out[i] = a.name
	}
	return out
}

// Speech is a text to speak at once, outside any audio: a request of the
// speech convention.
type Speech struct {
	// ProjectID names the project whose pronunciation rules apply; 0 for
	// none.
	ProjectID int64
	// Voice speaks every sentence; its language reads the text.
	Voice Voice
	// Text is read as an article body is (plain text, Markdown, HTML or
	// SSML).
	Text string
	// Speed multiplies the speaking rate, within MinSpeechSpeed and
	// MaxSpeechSpeed; 0 means 1.
	Speed float64
	// Format is SpeechMP3, SpeechWAV or SpeechPCM.
	Format string
}
