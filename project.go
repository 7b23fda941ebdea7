package narrator

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// ProjectTypeAPI is the only project type: audios arrive through the API.
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
	AudioCount int    // live (not deleted) audios; filled in by reads
	CreatedAt  time.Time
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
	if p.Type != ProjectTypeAPI {
		return Errorf(EINVALID, "type must be %q", ProjectTypeAPI)
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
