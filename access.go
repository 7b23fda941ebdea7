package narrator

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Access modes: how a project's embedded player finds its audio.
const (
	// AccessPublic projects show their published audios to any page that
	// asks, or, with AllowedOrigins, to pages of those origins.
	AccessPublic = "public"
	// AccessSigned projects show an audio only to a page that carries an
	// EmbedToken signed with the project's secret for that audio.
	AccessSigned = "signed"
)

// EmbedSecretPrefix starts every embed signing secret.
const EmbedSecretPrefix = "nes_"

// MaxAllowedOrigins caps a project's list of allowed origins.
const MaxAllowedOrigins = 20

// ProjectAccess is who may play a project's audios without an API key.
type ProjectAccess struct {
	ProjectID int64
	Mode      string // AccessPublic or AccessSigned
	// AllowedOrigins are the origins (scheme://host[:port]) whose pages
	// may embed the player; none means any.
	AllowedOrigins []string
	// SigningSecret keys the EmbedTokens of a signed project; "" until one
	// is made. The whole string, prefix included, is the HMAC key.
	SigningSecret string
	// DraftNewAudios makes new audios drafts: they wait for their
	// publisher instead of being published when processed.
	DraftNewAudios bool
	// DownloadButton shows listeners a button that downloads the MP3.
	DownloadButton bool
	UpdatedAt      time.Time // zero if never changed
}

// DefaultAccess is the access of a project whose publisher never changed
// it: public to every origin, new audios published.
func DefaultAccess(projectID int64) ProjectAccess {
	return ProjectAccess{ProjectID: projectID, Mode: AccessPublic}
}

// Validate checks the settings and puts the origins in canonical form
// (lower-case scheme and host, no default port), without duplicates.
func (a *ProjectAccess) Validate() error {
	switch a.Mode {
	case AccessPublic:
	case AccessSigned:
		if a.SigningSecret == "" {
			return Errorf(EINVALID, "a signed project needs a signing secret; rotate the secret to make one")
		}
	default:
		return Errorf(EINVALID, "access must be %q or %q", AccessPublic, AccessSigned)
	}
	if len(a.AllowedOrigins) > MaxAllowedOrigins {
		return Errorf(EINVALID, "at most %d allowed origins, not %d", MaxAllowedOrigins, len(a.AllowedOrigins))
	}
	var origins []string
	for _, o := range a.AllowedOrigins {
		c, err := CanonicalOrigin(o)
		if err != nil {
			return err
		}
		if !slices.Contains(origins, c) {
			origins = append(origins, c)
		}
	}
	a.AllowedOrigins = origins
	return nil
}

// CanonicalOrigin returns s, an http(s) origin, as browsers send it in
// Origin headers: lower-case scheme and host, the port only when not the
// scheme's default, no path. EINVALID if s is not one.
func CanonicalOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", Errorf(EINVALID, "allowed origin %q is not an origin such as https://news.example.com", s)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	scheme := strings.ToLower(u.Scheme)
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// AllowsOrigin reports whether a page of origin may embed the player. An
// unknown origin ("") is allowed: browsers that send none are held back by
// FrameAncestors instead.
func (a *ProjectAccess) AllowsOrigin(origin string) bool {
	if len(a.AllowedOrigins) == 0 || origin == "" {
		return true
	}
	c, err := CanonicalOrigin(origin)
	return err == nil && slices.Contains(a.AllowedOrigins, c)
}

// FrameAncestors returns the value of the player page's CSP
// frame-ancestors directive: the allowed origins, or * for any.
func (a *ProjectAccess) FrameAncestors() string {
	if len(a.AllowedOrigins) == 0 {
		return "*"
	}
	return strings.Join(a.AllowedOrigins, " ")
}

// NewPublication returns the publication of a new audio of the project:
// a draft if the project makes new audios wait, else published.
func (a *ProjectAccess) NewPublication(audioID int64) Publication {
	if a.DraftNewAudios {
		return Publication{AudioID: audioID, State: PublicationDraft}
	}
	return DefaultPublication(audioID)
}

// NewEmbedSecret returns a new signing secret: EmbedSecretPrefix and the
// URL-safe base64 of 32 random bytes, without padding.
func NewEmbedSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", Errorf(EINTERNAL, "read random bytes: %v", err)
	}
	return EmbedSecretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// EmbedSubject names the audio an embed looks up, as a token signs it:
// "external_id:" and the external ID, or "url:" and the article URL
// without its fragment.
func EmbedSubject(externalID, articleURL string) string {
	if externalID != "" {
		return "external_id:" + externalID
	}
	articleURL, _, _ = strings.Cut(articleURL, "#")
	return "url:" + articleURL
}

// MediaSubject names a folder of media (the token in
// /media/{token}/audio.mp3) as a media token of a signed project signs
// it: "media:" and the folder. The media server serves a signed project's
// files only with ?token= and a token of this subject (SignEmbed), so a
// media URL copied out of a page stops working when its token expires.
func MediaSubject(folder string) string { return "media:" + folder }

// MediaToken returns the ?token= that opens the media at key (its folder,
// the key's first segment) of a signed project until expires, and "" for
// a public project, whose media need none.
func (a *ProjectAccess) MediaToken(key string, expires time.Time) string {
	if a.Mode != AccessSigned {
		return ""
	}
	folder, _, _ := strings.Cut(key, "/")
	return SignEmbed(a.SigningSecret, a.ProjectID, MediaSubject(folder), expires)
}

// MediaTokenLife is how long the media token the player hands out lasts
// beyond the audio's duration: long enough to listen to the end with
// pauses, short enough that a copied URL soon stops working.
const MediaTokenLife = time.Hour

// MediaTokenExpiry returns when the media token of an audio of duration,
// handed out at now, expires. An audio still being made (duration 0) gets
// MaxLiveTokenLife, enough for the longest audio.
func MediaTokenExpiry(now time.Time, duration time.Duration) time.Time {
	if duration <= 0 {
		return now.Add(MaxLiveTokenLife)
	}
	return now.Add(duration + MediaTokenLife)
}

// MaxLiveTokenLife is how long the media token of a live stream lasts.
const MaxLiveTokenLife = 4 * time.Hour

// embedMessage is what an EmbedToken signs: the version, the project, the
// expiry and the subject, joined by dots. Only the subject, last, may hold
// dots, so no two messages are written alike.
func embedMessage(projectID int64, subject string, expires int64) string {
	return "v1." + strconv.FormatInt(projectID, 10) + "." + strconv.FormatInt(expires, 10) + "." + subject
}

// SignEmbed returns the token that lets a page play the audio subject
// (EmbedSubject) of the project until expires: the expiry in Unix
// seconds, a dot, and the unpadded URL-safe base64 of HMAC-SHA256 over
// "v1.{project_id}.{expires}.{subject}", keyed with the secret as written.
func SignEmbed(secret string, projectID int64, subject string, expires time.Time) string {
	exp := expires.Unix()
	return strconv.FormatInt(exp, 10) + "." + embedMAC(secret, embedMessage(projectID, subject, exp))
}

func embedMAC(secret, msg string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CheckEmbedToken reports whether token lets a page play subject of the
// project at now: signed with secret for that project and subject, not
// expired, and expiring at most MaxEmbedTokenLife after now. Every failure is the same false, so no answer tells a
// forged token from an expired one.
func CheckEmbedToken(secret string, projectID int64, subject, token string, now time.Time) bool {
	if secret == "" {
		return false
	}
	expText, sig, ok := strings.Cut(token, ".")
	if !ok {
		return false
	}
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || exp <= 0 || strconv.FormatInt(exp, 10) != expText || tooLate(exp, now) {
		return false
	}
	want := embedMAC(secret, embedMessage(projectID, subject, exp))
	return hmac.Equal([]byte(sig), []byte(want)) && now.Unix() < exp
}

// MaxEmbedTokenLife is how far ahead of the time it is used a token's
// expiry may lie. A token cannot be revoked but by rotating the
// project's secret, which revokes every token; so a grant has an end: a
// year (and a day, for leap years). CMSs sign tokens for the page they
// render, or for a subscription's term.
const MaxEmbedTokenLife = 366 * 24 * time.Hour

// CheckEmbedTokenExpiry returns an EINVALID *Error if token names an
// expiry more than MaxEmbedTokenLife after now. Any other token passes,
// valid or not: CheckEmbedToken judges it, and refuses this one too. The
// answer depends only on the token's text and the time, never on a
// project or an audio, so it tells nothing about what exists.
func CheckEmbedTokenExpiry(token string, now time.Time) error {
	expText, _, _ := strings.Cut(token, ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || !tooLate(exp, now) {
		return nil
	}
	return Errorf(EINVALID, "the token expires more than %d days ahead; sign tokens that expire within %d days",
		MaxEmbedTokenLife/(24*time.Hour), MaxEmbedTokenLife/(24*time.Hour))
}

// tooLate reports whether the expiry exp, in Unix seconds, lies more than
// MaxEmbedTokenLife after now.
func tooLate(exp int64, now time.Time) bool {
	return exp > now.Add(MaxEmbedTokenLife).Unix()
}

// EmbedVisit is what an anonymous page presents to see an audio.
type EmbedVisit struct {
	Subject string // EmbedSubject of its lookup
	Token   string // "" when it carries none
	Origin  string // the embedding page's origin, "" when unknown
}

// Admits reports whether the project shows its audios to v at now: from
// an allowed origin, and, in a signed project, with a valid token for the
// subject. Whether that audio exists and is published is asked apart
// (Listed); the player answers every refusal alike.
func (a *ProjectAccess) Admits(v EmbedVisit, now time.Time) bool {
	if !a.AllowsOrigin(v.Origin) {
		return false
	}
	switch a.Mode {
	case AccessPublic:
		return true
	case AccessSigned:
		return CheckEmbedToken(a.SigningSecret, a.ProjectID, v.Subject, v.Token, now)
	}
	return false
}
