package narrator

import (
	"time"
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
	UpdatedAt  time.Time
}

// Duration returns how long the clip plays.
func (c *Clip) Duration() time.Duration {
	if c.SampleRate <= 0 {
		return 0
	}
	return time.Duration(int64(len(c.Samples)) * int64(time.Second) / int64(c.SampleRate))
}

// Validate checks the clip's kind and length: an EINVALID *Error for an
// unknown kind, no sample rate or a length outside MinClipDuration to
// MaxClipDuration.
func (c *Clip) Validate() error {
	if _, err := ParseClipKind(string(c.Kind)); err != nil {
		return err
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
