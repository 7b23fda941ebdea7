package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// languageNames are the names the dashboard shows for the catalog's
// locales; an unknown locale shows as its code.
var languageNames = map[string]string{
	"cs_CZ": "Czech", "da_DK": "Danish", "de_DE": "German", "el_GR": "Greek",
	"en_GB": "English (UK)", "en_US": "English (US)", "es_ES": "Spanish (Spain)", "es_MX": "Spanish (Mexico)",
	"fi_FI": "Finnish", "fr_FR": "French", "hu_HU": "Hungarian", "it_IT": "Italian",
	"nb_NO": "Norwegian", "nl_NL": "Dutch", "pl_PL": "Polish", "pt_BR": "Portuguese (Brazil)",
	"pt_PT": "Portuguese (Portugal)", "ro_RO": "Romanian", "ru_RU": "Russian", "sv_SE": "Swedish",
	"tr_TR": "Turkish",
}

// languageName returns a locale's name followed by its code.
func languageName(code string) string {
	if n, ok := languageNames[code]; ok {
		return n + " · " + code
	}
	return code
}

// previewTexts are the sample sentences of the voice previews, by
// language (the locale's first part); %s is the voice's name.
var previewTexts = map[string]string{
	"cs": "Dobrý den, jsem %s. Budu číst vaše články nahlas.",
	"da": "Hej, jeg hedder %s. Jeg læser dine artikler højt.",
	"de": "Hallo, ich bin %s. Ich lese Ihre Artikel vor.",
	"el": "Γεια σας, είμαι ο %s. Θα διαβάζω τα άρθρα σας.",
	"en": "Hello, I am %s. I will read your articles aloud.",
	"es": "Hola, soy %s. Leeré sus artículos en voz alta.",
	"fi": "Hei, olen %s. Luen artikkelisi ääneen.",
	"fr": "Bonjour, je suis %s. Je lirai vos articles à voix haute.",
	"hu": "Jó napot, %s vagyok. Felolvasom a cikkeit.",
	"it": "Ciao, sono %s. Leggerò i vostri articoli ad alta voce.",
	"nb": "Hei, jeg heter %s. Jeg leser artiklene dine høyt.",
	"nl": "Hallo, ik ben %s. Ik lees uw artikelen voor.",
	"pl": "Dzień dobry, jestem %s. Przeczytam twoje artykuły na głos.",
	"pt": "Olá, eu sou %s. Vou ler os seus artigos em voz alta.",
	"ro": "Bună ziua, sunt %s. Vă voi citi articolele cu voce tare.",
	"ru": "Здравствуйте, я %s. Я буду читать ваши статьи вслух.",
	"sv": "Hej, jag heter %s. Jag läser dina artiklar högt.",
	"tr": "Merhaba, ben %s. Makalelerinizi sesli okuyacağım.",
}

// previewText returns the sample a voice reads in its preview.
func previewText(v narrator.Voice) string {
	lang, _, _ := strings.Cut(v.Language, "_")
	t, ok := previewTexts[lang]
	if !ok {
		t = previewTexts["en"]
	}
	return fmt.Sprintf(t, v.Name)
}

// voiceOption is a voice as the pickers offer it.
type voiceOption struct {
	Name, Label, Language string
}

// languageOption is a language with its voices and defaults.
type languageOption struct {
	Code, Name                string
	DefaultTitle, DefaultBody string
	Voices                    []voiceOption
}

// catalog returns the current voice catalog.
func (s *Server) catalog(ctx context.Context) *narrator.Catalog {
	if s.voices == nil {
		return narrator.BuiltinCatalog()
	}
	return s.voices.Catalog(ctx)
}

// languageOptions returns the languages and voices the pickers offer.
func languageOptions(cat *narrator.Catalog) []languageOption {
	byLang := map[string][]voiceOption{}
	for _, v := range cat.Voices() {
		byLang[v.Language] = append(byLang[v.Language], voiceOption{Name: v.Name, Label: v.Label(), Language: v.Language})
	}
	var out []languageOption
	for _, code := range cat.Languages() {
		t, b, _ := cat.Defaults(code)
		out = append(out, languageOption{Code: code, Name: languageName(code), DefaultTitle: t.Name, DefaultBody: b.Name, Voices: byLang[code]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// previewTimeout bounds the wait for a preview a worker is making, unless
// Deps.PreviewTimeout says otherwise.
const previewTimeout = 30 * time.Second

// previewPoll is how often a request waiting for a preview looks for it.
const previewPoll = 200 * time.Millisecond

// previewKey is where a voice's preview of text is kept in the media
// store: the same on every node, and new when the sample text changes.
func previewKey(v narrator.Voice, text string) string {
	// An installed voice's files change its build, and so its preview.
	sum := sha256.Sum256([]byte(v.Build + "\x00" + text))
	// The catalog's names are letters, digits, spaces, hyphens and apostrophes: a valid key.
	return "previews/" + v.Language + "/" + v.Name + "-" + hex.EncodeToString(sum[:8]) + ".mp3"
}

// voicePreview serves a short MP3 of a voice from the media store. On the
// first request for it, a worker node makes it (a job), and the request
// waits for it to appear, so that any node, including one that runs no
// speech engines, serves the same preview.
func (s *Server) voicePreview(w http.ResponseWriter, r *http.Request, q *request) error {
	v, ok := s.catalog(r.Context()).Lookup(r.PathValue("lang"), r.PathValue("name"))
	if !ok || s.previews == nil || s.media == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such voice")
	}
	text := previewText(v)
	job := narrator.PreviewJob{Language: v.Language, Voice: v.Name, Text: text, Key: previewKey(v, text)}
	ctx, cancel := context.WithTimeout(r.Context(), s.previewWait)
	defer cancel()
	requested := false
	for {
		f, info, err := s.media.Open(ctx, job.Key)
		switch {
		case err == nil:
			defer f.Close()
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Header().Set("Cache-Control", "private, max-age=86400")
			http.ServeContent(w, r, "preview.mp3", info.ModTime, f)
			return nil
		case !errors.Is(err, narrator.ErrBlobNotFound) && ctx.Err() == nil:
			return fmt.Errorf("open preview %s: %w", job.Key, err)
		}
		if !requested {
			if err := s.previews.RequestPreview(ctx, job); err != nil {
				return fmt.Errorf("request preview of %s/%s: %w", v.Language, v.Name, err)
			}
			requested = true
		}
		select {
		case <-ctx.Done():
			if r.Context().Err() != nil {
				return r.Context().Err()
			}
			return narrator.Errorf(narrator.EUNAVAILABLE, "The preview of %s is not ready yet. Try again in a minute.", v.Name)
		case <-time.After(previewPoll):
		}
	}
}

// voiceRow is a voice as the Voices page lists it.
type voiceRow struct {
	Name, Label, Language, Engine, Quality, License string
	Neural, WordTimings                             bool
	Default                                         string // "title", "body", "title and body" or ""
}

// voicesLanguage is a language of the Voices page.
type voicesLanguage struct {
	Code, Name string
	Voices     []voiceRow
}

// voicesPage lists every voice of the catalog by language, with a preview of each, which
// are neural and which time each word of their transcripts.
func (s *Server) voicesPage(w http.ResponseWriter, r *http.Request, q *request) error {
	cat := s.catalog(r.Context())
	byLang := map[string][]voiceRow{}
	for _, v := range cat.Voices() {
		t, b, _ := cat.Defaults(v.Language)
		var roles []string
		if t.Name == v.Name {
			roles = append(roles, "title")
		}
		if b.Name == v.Name {
			roles = append(roles, "body")
		}
		byLang[v.Language] = append(byLang[v.Language], voiceRow{
			Name: v.Name, Label: v.Label(), Language: v.Language, Engine: v.Engine, Quality: v.Quality, License: v.License,
			Neural: narrator.Neural(v.Engine), WordTimings: cat.WordTimings(v), Default: strings.Join(roles, " and "),
		})
	}
	var langs []voicesLanguage
	for _, code := range cat.Languages() {
		langs = append(langs, voicesLanguage{Code: code, Name: languageName(code), Voices: byLang[code]})
	}
	sort.SliceStable(langs, func(i, j int) bool { return langs[i].Name < langs[j].Name })
	return s.render(w, r, http.StatusOK, "voices", userPage(q, "Voices", "voices", struct{ Languages []voicesLanguage }{langs}))
}
