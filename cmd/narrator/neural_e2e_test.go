//go:build e2e

package main

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
	"github.com/narrator/narrator/internal/onnx/onnxtest"
	"github.com/narrator/narrator/internal/proctest"
)

// neuralArticle has eight sentences: enough that a worker crashing on its third run does so
// mid-article.
const neuralArticle = `<p>The council met on Tuesday. It approved the new library. The budget is three million.</p>
<p>Work starts in spring. The doors open next year. Readers asked for longer hours.</p>
<p>The board agreed. Everyone was pleased.</p>`

type installedOut struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Label    string `json:"label"`
	Language string `json:"language"`
	Engine   string `json:"engine"`
	Quality  string `json:"quality"`
}

// TestNeuralVoice installs a Piper voice with the CLI, makes it a project's voice, and
// narrates an article with it through narrator serve while every worker crashes on its third
// run: the audio completes, with its MP3, HLS and transcript, and the server stays up.
func TestNeuralVoice(t *testing.T) {
	t.Parallel()
	lib := onnxtest.Library(t)
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	data, acct, _ := fixture(t)
	model := tinyPiper(t)

	// The files do not say the voice's gender.
	if _, errOut, err := runCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, model); err == nil || !strings.Contains(errOut+err.Error(), "--gender") {
		t.Errorf("install without --gender: %v %s, want an error naming --gender", err, errOut)
	}
	got := mustJSON[[]installedOut](t, mustCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", "--json", model))
	if len(got) != 1 || got[0].ID != "piper-en_us-tiny-medium" || got[0].Label != "Tiny (Female)" || got[0].Language != "en_US" || got[0].Quality != "medium" {
		t.Fatalf("installed %+v", got)
	}
	// The catalog lists it, as the language's new default.
	list := mustCLI(t, "voices", "--data", data, "--language", "en_US")
	if !strings.Contains(list, "Tiny") || !strings.Contains(list, "piper/piper-en_us-tiny-medium") {
		t.Errorf("voices:\n%s", list)
	}
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Neural", "--language", "en_US"))
	if proj.BodyVoice != "Tiny (Female)" {
		t.Errorf("a new en_US project speaks with %q, want the installed voice, Tiny (Female)", proj.BodyVoice)
	}

	// Every worker crashes on its third run, as one killed for its memory would.
	s := startServerEnv(t, []string{"NARRATOR_TEST_ONNX_FAULT=crash:3"}, data, freeAddr(t), "--onnxruntime", lib)
	c := s.client(t, acct.APIKey)
	if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Title: "Library news", Body: neuralArticle, ExternalID: "n-1"}); err != nil {
		t.Fatal(err)
	}
	a := waitProcessed(t, c, proj.ID, "n-1", 90*time.Second)
	if !strings.Contains(s.logs.String(), "onnx worker killed and replaced") {
		t.Errorf("the server log says nothing of the crashed workers:\n%s", s.logs.String())
	}
	res, body := fetch(t, a.MediaURL(client.ContentTypeMP3))
	if res.StatusCode != 200 {
		t.Fatalf("mp3: %d", res.StatusCode)
	}
	d, rms := decodeMP3(t, body)
	if d < 5*time.Second || d > 40*time.Second || rms < 0.01 {
		t.Errorf("mp3 lasts %s with rms %.4f; want 9 sentences of about a second each, audible", d, rms)
	}
	res, pl := fetch(t, a.MediaURL(client.ContentTypeM3U8))
	if res.StatusCode != 200 {
		t.Fatalf("playlist: %d", res.StatusCode)
	}
	_, durations, _ := playlist(t, pl)
	var total float64
	for _, x := range durations {
		total += x
	}
	if math.Abs(total-d.Seconds()) > 0.05 {
		t.Errorf("segments last %.3f s, the mp3 %.3f s", total, d.Seconds())
	}
	tr, err := c.Transcript(t.Context(), proj.ID, "n-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sentences) != 9 || tr.Sentences[1].Text != "The council met on Tuesday." {
		t.Errorf("transcript sentences %+v", tr.Sentences)
	}
	if res, _ := fetch(t, s.base+"/healthz"); res.StatusCode != 200 {
		t.Errorf("healthz %d after the crashes", res.StatusCode)
	}

	// A Kokoro model with one voice's raw style table, as kokoro-js ships them: the voice
	// installs under its own name, speaks, and outranks the Piper voice as a default.
	kdir := t.TempDir()
	kmodel, styles := filepath.Join(kdir, "kokoro-v1.0.onnx"), filepath.Join(kdir, "af_heart.bin")
	if err := os.WriteFile(kmodel, onnxtest.Kokoro(onnxtest.KokoroOptions{Repeat: 100}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(styles, make([]byte, 510*256*4), 0o600); err != nil {
		t.Fatal(err)
	}
	got = mustJSON[[]installedOut](t, mustCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--json", kmodel, styles))
	if len(got) != 1 || got[0].ID != "kokoro-af_heart" || got[0].Label != "Heart (Female)" || got[0].Engine != "kokoro" {
		t.Fatalf("installed %+v", got)
	}
	kproj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Kokoro", "--language", "en_US"))
	if kproj.BodyVoice != "Heart (Female)" || kproj.TitleVoice != "Tiny (Female)" {
		t.Errorf("a new en_US project speaks with %q and titles with %q, want Heart, then Tiny", kproj.BodyVoice, kproj.TitleVoice)
	}
	if _, err := c.CreateAudio(t.Context(), kproj.ID, client.NewAudio{Title: "Kokoro", Body: "<p>Hello from a Kokoro voice.</p>", ExternalID: "k-1"}); err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, c, kproj.ID, "k-1", 90*time.Second)

	// Removed, the voice gives way to the language's built-in default.
	if out := mustCLI(t, "voices", "remove", "--data", data, "piper-en_us-tiny-medium"); !strings.Contains(out, "removed") {
		t.Errorf("remove: %s", out)
	}
	if _, _, err := runCLI(t, "voices", "remove", "--data", data, "piper-en_us-tiny-medium"); err == nil {
		t.Error("removing it twice: no error")
	}

	// Downloaded again, from a mirror with the Piper repository's layout.
	repo := map[string][]byte{}
	for _, name := range []string{"en_US-tiny-medium.onnx", "en_US-tiny-medium.onnx.json"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(model), name))
		if err != nil {
			t.Fatal(err)
		}
		repo["en/en_US/tiny/medium/"+name] = b
	}
	files := map[string]map[string]any{}
	for p, b := range repo {
		files[p] = map[string]any{"size_bytes": len(b), "md5_digest": fmt.Sprintf("%x", md5.Sum(b))}
	}
	index, err := json.Marshal(map[string]any{"en_US-tiny-medium": map[string]any{"files": files}})
	if err != nil {
		t.Fatal(err)
	}
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/voices.json" {
			w.Write(index)
			return
		}
		w.Write(repo[strings.TrimPrefix(r.URL.Path, "/")])
	}))
	defer mirror.Close()
	// A plain-http mirror only where the operator allows it.
	if _, _, err := runCLI(t, "voices", "download", "--data", data, "--onnxruntime", lib, "--gender", "female", "--from", mirror.URL+"/", "--json", "en_US-tiny-medium"); err == nil || !strings.Contains(err.Error(), "--allow-insecure-mirror") {
		t.Errorf("download from an http mirror: %v, want a refusal", err)
	}
	out, errOut, err := runCLI(t, "voices", "download", "--data", data, "--onnxruntime", lib, "--gender", "female", "--from", mirror.URL+"/", "--allow-insecure-mirror", "--json", "en_US-tiny-medium")
	if err != nil {
		t.Fatalf("download: %v\n%s", err, errOut)
	}
	got = mustJSON[[]installedOut](t, out)
	if len(got) != 1 || got[0].ID != "piper-en_us-tiny-medium" {
		t.Errorf("downloaded %+v", got)
	}
	if !strings.Contains(errOut, "en_US-tiny-medium.onnx from "+mirror.URL) || !strings.Contains(errOut, "checked against the index's MD5; the index gives no SHA-256") {
		t.Errorf("download says nothing of where the files came from and how they were checked:\n%s", errOut)
	}
}

// TestNeuralVoiceCluster installs a voice into PostgreSQL and S3, then a node with a data
// directory of its own, which has never seen the voice's files, narrates with it: it fetches
// them from S3.
func TestNeuralVoiceCluster(t *testing.T) {
	t.Parallel()
	lib := onnxtest.Library(t)
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	adminURL, s3URL := clusterEnv(t)
	db, media := newDatabase(t, adminURL), withPrefix(t, s3URL, randomName(t, "neural-"))
	backends := []string{"--database", db, "--media", media}
	installer := t.TempDir()
	// The built binary, which reads the S3 credentials from the environment, as an
	// operator's shell gives them.
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, args...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("narrator %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	cli(append(append([]string{"voices", "install", "--data", installer, "--onnxruntime", lib, "--gender", "male", "--name", "Tim", "--json"}, backends...), tinyPiper(t))...)
	acct := mustJSON[accountOut](t, cli(append([]string{"accounts", "create", "--data", installer, "--name", "Acme"}, backends...)...))
	proj := mustJSON[projectOut](t, cli(append([]string{"projects", "create", "--data", installer, "--account", fmt.Sprint(acct.ID), "--title", "Daily", "--language", "en_US", "--body-voice", "Tim"}, backends...)...))

	data := t.TempDir()
	s := startServer(t, data, freeAddr(t), append(backends, "--onnxruntime", lib)...)
	c := s.client(t, acct.APIKey)
	if _, err := c.CreateAudio(t.Context(), proj.ID, client.NewAudio{Title: "Hello", Body: "<p>The worker has never seen this voice. It fetches it.</p>", ExternalID: "c-1"}); err != nil {
		t.Fatal(err)
	}
	waitProcessed(t, c, proj.ID, "c-1", 90*time.Second)
	cached, err := os.ReadDir(filepath.Join(data, "voices"))
	if err != nil || len(cached) != 2 {
		t.Errorf("the node cached %d voice files (%v), want the model and its config", len(cached), err)
	}
}

// TestNeuralLiveStream narrates an article with a neural voice whose runs take a while, as a
// real model's do, and plays its live stream before it is processed: the first segment
// decodes to two seconds of speech.
func TestNeuralLiveStream(t *testing.T) {
	t.Parallel()
	lib := onnxtest.Library(t)
	if helperErr != nil {
		proctest.Missing(t, helperErr.Error(), "apt-get install gcc libespeak-ng-dev")
	}
	data, acct, _ := fixture(t)
	// Paced (30 ms a phoneme ID) and computing about 50 GFLOP a run: a second or so per
	// sentence on the build machine.
	model, _ := writePiper(t, "en_US-slow-medium", onnxtest.Piper(onnxtest.PiperOptions{Repeat: 661, Paced: true, Compute: 1500}), nil)
	mustCLI(t, "voices", "install", "--data", data, "--onnxruntime", lib, "--gender", "female", model)
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Live", "--language", "en_US"))
	if proj.BodyVoice != "Slow (Female)" {
		t.Fatalf("the project speaks with %q, want the installed voice", proj.BodyVoice)
	}
	s := startServer(t, data, freeAddr(t), "--onnxruntime", lib)
	s.create(t, proj.ID, map[string]any{
		"api_key": acct.APIKey, "title": "Live news", "body": neuralArticle, "external_id": "live-n",
	})
	p := s.waitLive(t, proj.ID, "live-n", acct.APIKey)
	res, list := fetch(t, p.LiveURL)
	if res.StatusCode != 200 {
		t.Fatalf("live playlist: %d", res.StatusCode)
	}
	uris, durations, _ := livePlaylist(t, list)
	for deadline := time.Now().Add(time.Minute); len(uris) == 0; { // the playlist exists before its first segment
		if time.Now().After(deadline) {
			t.Fatalf("the live playlist has no segment within a minute:\n%s", list)
		}
		time.Sleep(50 * time.Millisecond)
		_, list = fetch(t, p.LiveURL)
		uris, durations, _ = livePlaylist(t, list)
	}
	if uris[0] != "seg-00000.ts" || durations[0] < 2 || durations[0] > 2.05 {
		t.Fatalf("live playlist starts with %v lasting %v, want seg-00000.ts of 2.0… s:\n%s", uris, durations, list)
	}
	_, seg := fetch(t, p.LiveURL[:strings.LastIndex(p.LiveURL, "/")+1]+uris[0])
	if d, rms := decodeMP3(t, segmentMP3(t, seg)); d < 2*time.Second || d > 2100*time.Millisecond || rms < 0.01 {
		t.Errorf("first segment decodes to %v at RMS %.4f, want about 2 s of sound", d, rms)
	}
	c := s.client(t, acct.APIKey)
	waitProcessed(t, c, proj.ID, "live-n", 3*time.Minute)
}
