package narrator

import (
	"strings"
	"time"
	"unicode/utf8"
)

// ClipKind says where a project's clip plays in each of its audios.
type ClipKind string

// The clips a project may have.
const (
	ClipIntro ClipKind = "intro" // before the article
	ClipOutro ClipKind = "outro" // after it
)

// ClipKinds returns every clip kind, in playing order.
func ClipKinds() []ClipKind { return []ClipKind{ClipIntro, ClipOutro} }

// ParseClipKind returns the kind named s, or an EINVALID *Error.
func ParseClipKind(s string) (ClipKind, error) {
	switch k := ClipKind(s); k {
	case ClipIntro, ClipOutro:
		return k, nil
	}
	return "", Errorf(EINVALID, "a clip is %q or %q, not %q", ClipIntro, ClipOutro, s)
}

// Limits of a clip: the upload as sent, and the audio it decodes to.
const (
	MaxClipBytes    = 8 << 20
	MaxClipDuration = 30 * time.Second
	// MinClipDuration keeps out clips too short to be heard: a file of
	// silence headers only.
	MinClipDuration = 100 * time.Millisecond
	// MaxClipText is the most characters a spoken clip's text may hold:
	// more than MaxClipDuration takes to say at the fastest speech rate,
	// so that the spoken length, not the text's, is the limit that bites.
	MaxClipText = 1000
)

// Clip is a project's intro or outro: audio played, as it is, before or
// after every audio the project renders from the time it is set. Audios
// rendered before keep theirs. It is stored decoded, so that every
// rendering plays the same samples.
type Clip struct {
	ProjectID  int64
	Kind       ClipKind
	Samples    []int16 // mono
	SampleRate int     // Hz
	// Text and Voice are set on a spoken clip, one made by speaking Text
	// with Voice (its SpeechVoiceID) once, when it was set; both are ""
	// on an uploaded one.
	Text      string
	Voice     string
	UpdatedAt time.Time
}

// Duration returns how long the clip plays.
func (c *Clip) Duration() time.Duration {
	if c.SampleRate <= 0 {
		return 0
	}
	return time.Duration(int64(len(c.Samples)) * int64(time.Second) / int64(c.SampleRate))
}

// Validate checks the clip's kind and length: an EINVALID *Error for an
// unknown kind, no sample rate, a length outside MinClipDuration to
// MaxClipDuration, or a spoken clip whose text CheckClipText refuses or
// that names no voice.
func (c *Clip) Validate() error {
	if _, err := ParseClipKind(string(c.Kind)); err != nil {
		return err
	}
	if c.Text != "" || c.Voice != "" {
		if err := CheckClipText(c.Kind, c.Text); err != nil {
			return err
		}
		if strings.TrimSpace(c.Voice) == "" {
			return Errorf(EINVALID, "the spoken %s names no voice", c.Kind)
		}
	}
	if c.SampleRate <= 0 {
		return Errorf(EINVALID, "the %s has no sample rate", c.Kind)
	}
	switch d := c.Duration(); {
	case d > MaxClipDuration:
		return Errorf(EINVALID, "the %s is %.1f s long; it may be at most %.0f s", c.Kind, d.Seconds(), MaxClipDuration.Seconds())
	case d < MinClipDuration:
		return Errorf(EINVALID, "the %s is %.2f s long; it must be at least %.1f s", c.Kind, d.Seconds(), MinClipDuration.Seconds())
	}
	return nil
}

// CheckClipText checks the text of a spoken clip of kind, before it is
// spoken: an EINVALID *Error for a text that is blank, longer than
// MaxClipText characters, or not valid UTF-8. Whether it fits in
// MaxClipDuration once spoken only its speech tells (Validate).
func CheckClipText(kind ClipKind, text string) error {
	if !ValidText(text) {
		return Errorf(EINVALID, "the %s's text must be valid UTF-8 without NUL characters", kind)
	}
	if strings.TrimSpace(text) == "" {
		return Errorf(EINVALID, "the %s's text is empty; give the words to speak", kind)
	}
	if n := utf8.RuneCountInString(text); n > MaxClipText {
		return Errorf(EINVALID, "the %s's text is %d characters; at most %d are allowed", kind, n, MaxClipText)
	}
	return nil
}
