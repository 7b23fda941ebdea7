package narrator

import (
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ProjectTypeAPI is a project whose audios arrive through the API only.
const ProjectTypeAPI = "api"

// Project groups an account's audios with a language and two voices.
type Project struct {
	ID         int64
	AccountID  int64
	Title      string
	Type       string
	Language   string // a locale such as en_US
	URL        string // "" when not set
	TitleVoice string // a voice Name from the catalog
	BodyVoice  string // a voice Name from the catalog
	// SpeechRate is the speaking-rate factor of the project's renderings:
	// 1 is the voice's own pace, 1.25 a quarter faster; 0 means
	// DefaultSpeechRate. It multiplies any rate the article's SSML sets.
	SpeechRate float64
	AudioCount int // live (not deleted) audios; filled in by reads
	CreatedAt  time.Time
}

// The speaking rates a project may set (Project.SpeechRate): the range in
// which every engine's voices stay natural.
const (
	MinSpeechRate     = 0.5
	MaxSpeechRate     = 2.0
	DefaultSpeechRate = 1.0
)

// Rate returns the project's speaking-rate factor, DefaultSpeechRate when
// none is set.
func (p *Project) Rate() float64 {
	if p.SpeechRate == 0 {
		return DefaultSpeechRate
	}
	return p.SpeechRate
}

// checkSpeechRate checks a speaking rate other than 0 (the default).
func checkSpeechRate(rate float64) error {
	if rate != 0 && !(rate >= MinSpeechRate && rate <= MaxSpeechRate) { // NaN too
		return Errorf(EINVALID, "speech_rate must be a number from %.1f to %.1f (1.0 is the voice's own pace), not %g",
			MinSpeechRate, MaxSpeechRate, rate)
	}
	return nil
}

// SpeechRatePlan is what setting a project's speaking rate comes to.
type SpeechRatePlan struct {
	// Next is the project with its new rate, never 0.
	Next Project
	// Changed reports whether the rate differs from the stored one; when
	// false, nothing is to be written.
	Changed bool
}

// PlanSpeechRate sets the speaking rate of cur, a project as stored, to
// rate (0 for DefaultSpeechRate). It is the one rule of a rate change:
// it needs no new speech by itself, so the store writes the project's row
// and nothing else. Audios keep the speech they have; each rendering
// from then on (a new audio, a change of title, body or author, a
// regeneration, a re-synthesis after a pronunciation rule) speaks at the
// rate stored when it runs. It returns an EINVALID *Error for a rate
// resynthesis, after a pronunciation rule or not) speaks at the
func PlanSpeechRate(cur *Project, rate float64) (SpeechRatePlan, error) {
	if err := checkSpeechRate(rate); err != nil {
		return SpeechRatePlan{}, err
	}
	next := *cur
	next.SpeechRate = rate
	if rate == 0 {
		next.SpeechRate = DefaultSpeechRate
	}
	return SpeechRatePlan{Next: next, Changed: next.SpeechRate != cur.Rate()}, nil
}

// Validate checks the project's fields. Whether the server offers its
// language and voices depends on the voices installed: Catalog.CheckProject
// checks that.
func (p *Project) Validate() error {
	if strings.TrimSpace(p.Title) == "" {
		return Errorf(EINVALID, "title is required")
	}
	if len(p.Title) > 500 {
		return Errorf(EINVALID, "title must be at most 500 characters")
	}
	if err := checkText("title", p.Title); err != nil {
		return err
	}
	if !slices.Contains(ProjectTypes(), p.Type) {
		return Errorf(EINVALID, "type must be one of %s", strings.Join(ProjectTypes(), ", "))
	}
	if err := checkSpeechRate(p.SpeechRate); err != nil {
		return err
	}
	if !localeRE.MatchString(p.Language) {
		return Errorf(EINVALID, "language %q is not a locale such as en_US; run `narrator voices` for the list", p.Language)
	}
	if n := utf8.RuneCountInString(p.URL); n > MaxURLChars {
		return Errorf(EINVALID, "url is %d characters long; at most %d are allowed", n, MaxURLChars)
	}
	if err := checkText("url", p.URL); err != nil {
		return err
	}
	if p.URL != "" {
		if err := validateURL(p.URL); err != nil {
			return Errorf(EINVALID, "url: %s", err.Message)
		}
	}
	for _, v := range []struct{ field, name string }{{"title_voice", p.TitleVoice}, {"body_voice", p.BodyVoice}} {
		if strings.TrimSpace(v.name) == "" || len(v.name) > 100 {
			return Errorf(EINVALID, "%s must name a voice of language %s", v.field, p.Language)
		}
	}
	return nil
}

// validateURL accepts absolute http and https URLs.
func validateURL(s string) *Error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Errorf(EINVALID, "must be an absolute http or https URL")
	}
	return nil
}
