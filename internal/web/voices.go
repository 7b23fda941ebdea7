package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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

// catalog returns the languages and voices the pickers offer.
func catalog() []languageOption {
	byLang := map[string][]voiceOption{}
	for _, v := range narrator.Voices() {
		byLang[v.Language] = append(byLang[v.Language], voiceOption{Name: v.Name, Label: v.Label(), Language: v.Language})
	}
	var out []languageOption
	for _, code := range narrator.Languages() {
		t, b, _ := narrator.DefaultVoices(code)
		out = append(out, languageOption{Code: code, Name: languageName(code), DefaultTitle: t.Name, DefaultBody: b.Name, Voices: byLang[code]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// previewTimeout bounds the synthesis of one preview.
const previewTimeout = 30 * time.Second

// voicePreview serves a short MP3 of a voice, synthesised on first request
// and then cached on disk.
func (s *Server) voicePreview(w http.ResponseWriter, r *http.Request, q *request) error {
	v, ok := narrator.LookupVoice(r.PathValue("lang"), r.PathValue("name"))
	if !ok || s.previews == nil {
		return narrator.Errorf(narrator.ENOTFOUND, "no such voice")
	}
	// The catalog's names are plain letters, so this is a safe file name.
	key := v.Language + "_" + v.Name + ".mp3"
	unlock := s.previewMu.lock(key)
	defer unlock()
	var data []byte
	var mod time.Time
	file := ""
	if s.previewDir != "" {
		file = filepath.Join(s.previewDir, key)
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			data = b
			if fi, err := os.Stat(file); err == nil {
				mod = fi.ModTime()
			}
		}
	}
	if data == nil {
		ctx, cancel := context.WithTimeout(r.Context(), previewTimeout)
		defer cancel()
		var buf bytes.Buffer
		if err := s.previews.PreviewVoice(ctx, v, previewText(v), &buf); err != nil {
			return fmt.Errorf("preview voice %s/%s: %w", v.Language, v.Name, err)
		}
		data, mod = buf.Bytes(), s.now()
		if file != "" {
			if err := writeFileAtomic(file, data); err != nil {
				s.logger.Warn("cache voice preview", "voice", v.Name, "err", err)
			}
		}
	}
	w.Header().Set("Content-Type", "audio/mpeg")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	http.ServeContent(w, r, key, mod, bytes.NewReader(data))
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, then renames
// it into place, so readers never see half a file.
func writeFileAtomic(path string, data []byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".preview-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename to %s: %w", path, err)
	}
	return nil
}

// keyedMutex serialises work per key, so that two requests for the same
// preview synthesise it once.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks key and returns its unlock function.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
