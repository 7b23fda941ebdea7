package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/proctest"
	"github.com/narrator/narrator/internal/sqlite"
)

// writeWAV writes a WAV file of n samples of a square wave at rate.
func writeWAV(t *testing.T, name string, n, rate int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pcmtest.WAV(pcmtest.Square(n, 50, 4000), rate), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProjectsSetClips sets and removes a project's intro and outro with
// `narrator projects set`, and checks its refusals.
func TestProjectsSetClips(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "scripts/deps.sh test")
	data, _, proj := fixture(t)
	id := fmt.Sprint(proj.ID)
	stored := func() (kinds []string) {
		t.Helper()
		st, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, k := range narrator.ClipKinds() {
			c, err := st.Clip(t.Context(), proj.ID, k)
			if err == nil {
				kinds = append(kinds, fmt.Sprintf("%s %s", k, c.Duration()))
			} else if narrator.ErrorCode(err) != narrator.ENOTFOUND {
				t.Fatal(err)
			}
		}
		return kinds
	}
	intro := writeWAV(t, "intro.wav", 32000, 16000)
	outro := writeWAV(t, "outro.wav", 8000, 8000)
	out := mustJSON[projectOut](t, mustCLI(t, "projects", "set", "--data", data, "--project", id, "--intro", intro, "--outro", outro))
	if out.ID != proj.ID {
		t.Errorf("projects set printed %+v", out)
	}
	if got := strings.Join(stored(), ", "); got != "intro 2s, outro 1s" {
		t.Errorf("stored clips: %s, want a 2 s intro and a 1 s outro", got)
	}
	mustCLI(t, "projects", "set", "--data", data, "--project", id, "--no-intro")
	mustCLI(t, "projects", "set", "--data", data, "--project", id, "--no-intro") // gone already
	if got := strings.Join(stored(), ", "); got != "outro 1s" {
		t.Errorf("stored clips after --no-intro: %s, want the outro only", got)
	}

	notAudio := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notAudio, []byte("not audio"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--intro", notAudio},
		{"--intro", writeWAV(t, "long.wav", 31*8000, 8000)},
		{"--intro", filepath.Join(t.TempDir(), "missing.mp3")},
		{"--outro", outro, "--no-outro"},
	} {
		_, errOut, err := runCLI(t, append([]string{"projects", "set", "--data", data, "--project", id}, args...)...)
		if err == nil || err.Error() == "" && errOut == "" {
			t.Errorf("projects set %v: %v %q, want a refusal with a message", args, err, errOut)
		}
	}
	if _, _, err := runCLI(t, "projects", "set", "--data", data, "--project", "999", "--intro", intro); err == nil {
		t.Error("projects set --intro on project 999 succeeded")
	}
	if got := strings.Join(stored(), ", "); got != "outro 1s" {
		t.Errorf("stored clips after the refusals: %s, want the outro only", got)
	}
}

// TestProjectsSetSpokenClips sets an intro spoken by flite, and an outro
// by the project's body voice, with `narrator projects set`, and checks
// the refusals of the text flags.
func TestProjectsSetSpokenClips(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "flite", "apt-get install flite")
	_, body, _ := narrator.DefaultVoices("en_US")
	proctest.NeedProgram(t, body.Engine, "apt-get install "+body.Engine)
	data, _, proj := fixture(t)
	id := fmt.Sprint(proj.ID)
	const intro, outro = "Welcome to the Daily.", "Thanks for listening."
	mustCLI(t, "projects", "set", "--data", data, "--project", id, "--intro-text", intro, "--intro-voice", "Kevin", "--outro-text", outro)
	st, err := sqlite.Open(t.Context(), filepath.Join(data, "narrator.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for k, want := range map[narrator.ClipKind][2]string{
		narrator.ClipIntro: {intro, "en_US/Kevin"},
		narrator.ClipOutro: {outro, narrator.SpeechVoiceID(body)},
	} {
		c, err := st.Clip(t.Context(), proj.ID, k)
		if err != nil {
			t.Fatal(err)
		}
		if c.Text != want[0] || c.Voice != want[1] || c.Duration() < 500*time.Millisecond {
			t.Errorf("stored %s: %q by %q, %s; want %q by %q", k, c.Text, c.Voice, c.Duration(), want[0], want[1])
		}
	}

	for _, args := range [][]string{
		{"--intro-text", "Hello.", "--intro", writeWAV(t, "intro.wav", 8000, 8000)},
		{"--intro-text", "Hello.", "--no-intro"},
		{"--outro-voice", "Kevin"},
		{"--intro-text", strings.Repeat("Hello. ", 150)},
		{"--intro-text", "Hello.", "--intro-voice", "Nobody"},
	} {
		_, errOut, err := runCLI(t, append([]string{"projects", "set", "--data", data, "--project", id}, args...)...)
		if err == nil || err.Error() == "" && errOut == "" {
			t.Errorf("projects set %v: %v %q, want a refusal with a message", args, err, errOut)
		}
	}
	if c, err := st.Clip(t.Context(), proj.ID, narrator.ClipIntro); err != nil || c.Text != intro {
		t.Errorf("intro after the refusals: %+v, %v", c, err)
	}
}
