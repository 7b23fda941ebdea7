//go:build e2e

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/phonemize"
)

// TestNeuralSpeechRate sets a project's speaking rate to 1.25 through the API, with a tone
// voice of Piper's signature at length scale 1: the audio narrated before keeps its speech;
// a new one, and the earlier one once one sentence of it is edited, speak every phoneme ID
// for Frames(length scale ÷ 1.25) × 256 samples, and their transcript and WebVTT word cues
// lie within 25 ms of where each word's phonemes start in the MP3.
func TestNeuralSpeechRate(t *testing.T) {
	t.Parallel()
	lib, phon := toneParts(t)
	data, acct, _ := fixture(t)
	tone, cfg := timedPiper(t, "en_US-tone-medium", 1, 1)
	if out, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", tone); err != nil || !strings.Contains(out, "yes") {
		t.Fatalf("install %s: %v\n%s%s", tone, err, out, errOut)
	}
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Rate", "--language", "en_US", "--title-voice", "Tone", "--body-voice", "Tone")).ID
	s := startServer(t, data, freeAddr(t), "--onnxruntime", lib)
	c := s.client(t, acct.APIKey)
	fast := *cfg
	fast.LengthScale = cfg.LengthScale / 1.25 // as the engine divides it
	check := func(label, ref string, cfg *phonemize.PiperConfig) {
		t.Helper()
		tr, mp3, vtt := rendering(t, c, proj, ref)
		checkWords(t, label, piperTones(phon, cfg), tr, mp3, vtt)
	}

	narrateHarbour(t, c, proj, "before")
	before, err := c.GetAudio(t.Context(), proj, "before")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.SetSpeechRate(t.Context(), proj, 1.25); err != nil || got.SpeechRate != 1.25 {
		t.Fatalf("SetSpeechRate(1.25) = %+v, %v", got, err)
	}
	if got, err := c.SpeechSettings(t.Context(), proj); err != nil || got.SpeechRate != 1.25 {
		t.Fatalf("SpeechSettings = %+v, %v", got, err)
	}
	// The change renders nothing again: the audio keeps its speech, at rate 1.
	if a, err := c.GetAudio(t.Context(), proj, "before"); err != nil || a.State != client.StateProcessed ||
		a.MediaURL(client.ContentTypeMP3) != before.MediaURL(client.ContentTypeMP3) {
		t.Fatalf("after the rate change the audio is %+v (%v), want it as it was", a, err)
	}
	check("rate 1, kept", "before", cfg)

	narrateHarbour(t, c, proj, "after")
	check("rate 1.25", "after", &fast)

	editHarbour(t, c, proj, "before")
	check("rate 1.25, one sentence edited", "before", &fast)
}
