package web_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/enginetest"
	"github.com/narrator/narrator/internal/flite"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/web"
)

// wavOfSeconds returns a WAV file of a square wave lasting secs at 8 kHz.
func wavOfSeconds(secs float64) []byte {
	return pcmtest.WAV(pcmtest.Square(int(secs*8000), 40, 4000), 8000)
}

// postUpload posts a multipart form of fields and, under each file
// field's name, a WAV file.
func (c *browser) postUpload(path string, fields map[string]string, files map[string][]byte) response {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			c.t.Fatal(err)
		}
	}
	for name, data := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="%s.wav"`, name, name))
		h.Set("Content-Type", "audio/wav")
		part, err := mw.CreatePart(h)
		if err != nil {
			c.t.Fatal(err)
		}
		part.Write(data)
	}
	if err := mw.Close(); err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), "POST", c.base+path, &body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.do(req)
}

// TestClipsForm uploads an intro and an outro on the Speech page, shows
// them, refuses audio it cannot use with the reason, and removes one.
func TestClipsForm(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *web.Deps) { d.Clips = pipeline.ClipDecoder{} })
	c := b.browser(t)
	c.mustSignIn("ed@acme.test")
	page := fmt.Sprintf("/projects/%d/speech", b.project.ID)
	action := fmt.Sprintf("/projects/%d/clips", b.project.ID)
	res := c.get(page)
	wantStatus(t, res, http.StatusOK)
	if !strings.Contains(res.body, `id="clips-form"`) || !strings.Contains(res.body, "None set.") {
		t.Fatal("the Speech page has no intro and outro form, or shows a clip not set")
	}
	token := c.csrf(page)
	stored := func(k narrator.ClipKind) float64 {
		t.Helper()
		clip, err := b.store.Clip(t.Context(), b.project.ID, k)
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return clip.Duration().Seconds()
	}

	wantStatus(t, c.postUpload(action, map[string]string{"csrf_token": token},
		map[string][]byte{"intro": wavOfSeconds(1.5), "outro": wavOfSeconds(2)}), http.StatusSeeOther)
	if in, out := stored(narrator.ClipIntro), stored(narrator.ClipOutro); in != 1.5 || out != 2 {
		t.Errorf("stored intro %g s, outro %g s; want 1.5 and 2", in, out)
	}
	if res := c.get(page); !strings.Contains(res.body, "Set: 1.5 s, played before") || !strings.Contains(res.body, "those made before keep their audio") {
		t.Error("after saving, the page does not show the intro and the notice")
	}

	for name, data := range map[string][]byte{"not audio": []byte("hello"), "too long": wavOfSeconds(31)} {
		res := c.postUpload(action, map[string]string{"csrf_token": token}, map[string][]byte{"intro": data})
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, "intro") {
			t.Errorf("%s: the refusal does not name the intro: %s", name, res.body)
		}
	}
	wantStatus(t, c.postUpload(action, nil, map[string][]byte{"intro": wavOfSeconds(1)}), http.StatusForbidden)
	if in := stored(narrator.ClipIntro); in != 1.5 {
		t.Errorf("a refused upload changed the intro to %g s", in)
	}

	wantStatus(t, c.postUpload(action, map[string]string{"csrf_token": token, "remove_intro": "1"}, nil), http.StatusSeeOther)
	if in, out := stored(narrator.ClipIntro), stored(narrator.ClipOutro); in != 0 || out != 2 {
		t.Errorf("after removing the intro: intro %g s, outro %g s; want none and 2", in, out)
	}
}

// TestSpokenClipsForm sets the intro as a text spoken by flite on the
// Speech page, shows its text and voice, and refuses a text with a file,
// a blank voice and a text too long.
func TestSpokenClipsForm(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "flite", "apt-get install flite")
	eng := enginetest.Must(t, flite.New, flite.Options{})
	pipe := pipeline.New(pipeline.Config{Engines: map[string]pipeline.Synthesizer{narrator.EngineFlite: eng}, Workers: 1, ScratchDir: t.TempDir()})
	t.Cleanup(func() { pipe.Close() })
	b := setup(t, func(d *web.Deps) { d.Clips, d.ClipSpeaker = pipeline.ClipDecoder{}, pipe })
	c := b.browser(t)
	c.mustSignIn("ed@acme.test")
	page := fmt.Sprintf("/projects/%d/speech", b.project.ID)
	action := fmt.Sprintf("/projects/%d/clips", b.project.ID)
	res := c.get(page)
	if !strings.Contains(res.body, `name="text_intro"`) || !strings.Contains(res.body, `<option value="en_US/Kevin"`) {
		t.Fatal("the Speech page offers no text and voice for the intro")
	}
	token := c.csrf(page)
	const text = "You are listening to Acme news."
	wantStatus(t, c.postUpload(action, map[string]string{"csrf_token": token, "text_intro": text, "voice_intro": "en_US/Kevin",
		"text_outro": " ", "voice_outro": "en_US/Kevin"}, nil), http.StatusSeeOther)
	clip, err := b.store.Clip(t.Context(), b.project.ID, narrator.ClipIntro)
	if err != nil || clip.Text != text || clip.Voice != "en_US/Kevin" || clip.Duration() < time.Second {
		t.Fatalf("stored intro %+v, %v; want the text spoken by Kevin", clip, err)
	}
	if _, err := b.store.Clip(t.Context(), b.project.ID, narrator.ClipOutro); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("a blank outro text set an outro: %v", err)
	}
	if res := c.get(page); !strings.Contains(res.body, "Spoken by en_US/Kevin: “"+text+"”") ||
		!strings.Contains(res.body, `<option value="en_US/Kevin" selected>`) {
		t.Error("the Speech page does not show the intro's text and voice")
	}

	for name, c2 := range map[string]struct {
		fields map[string]string
		files  map[string][]byte
		msg    string
	}{
		"file and text": {map[string]string{"text_intro": "Hello.", "voice_intro": "en_US/Kevin"}, map[string][]byte{"intro": wavOfSeconds(1)}, "not both"},
		"no voice":      {map[string]string{"text_intro": "Hello.", "voice_intro": ""}, nil, "choose a voice"},
		"text too long": {map[string]string{"text_intro": strings.Repeat("Hello. ", 150), "voice_intro": "en_US/Kevin"}, nil, "at most 1000"},
	} {
		c2.fields["csrf_token"] = token
		res := c.postUpload(action, c2.fields, c2.files)
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, c2.msg) {
			t.Errorf("%s: the refusal does not say %q", name, c2.msg)
		}
	}
	if clip, err := b.store.Clip(t.Context(), b.project.ID, narrator.ClipIntro); err != nil || clip.Text != text {
		t.Errorf("a refused form changed the intro: %+v, %v", clip, err)
	}
}
