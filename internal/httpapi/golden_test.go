package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// exchange is one request and its answer, as a golden file keeps it.
type exchange struct {
	Request string          `json:"request"`
	Status  int             `json:"status"`
	Body    json.RawMessage `json:"body"`
}

// TestGoldens freezes the v3 contract: for every endpoint, the exact JSON of
// its success and error answers. Run with -update to rewrite the files, and
// review the diff.
func TestGoldens(t *testing.T) {
	b := setup(t)
	audios, audio := b.audiosPath(), b.audioPath("golden-1")
	key := b.key
	record := func(method, path string, body any) exchange {
		r := b.do(t, method, path, body)
		var indented bytes.Buffer
		if err := json.Indent(&indented, r.body, "", "  "); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		// The key is random: the files show it as KEY.
		return exchange{Request: method + " " + strings.ReplaceAll(path, key, "KEY"), Status: r.status, Body: indented.Bytes()}
	}
	withKey := func(m map[string]any) map[string]any {
		m["api_key"] = key
		return m
	}
	files := []struct {
		name string
		run  func() []exchange
	}{
		{"create_audio", func() []exchange {
			return []exchange{
				record("POST", audios, withKey(map[string]any{"title": "T", "body": "Hello.", "external_id": "golden-1", "metadata": map[string]string{"section": "news"}})),
				record("POST", audios, withKey(map[string]any{"title": "T"})),
				record("POST", audios, map[string]any{"body": "Hello."}),
				record("POST", "/api/v3/projects/999/audio", withKey(map[string]any{"body": "Hello."})),
			}
		}},
		{"get_audio", func() []exchange {
			a, err := b.store.FindAudio(t.Context(), b.project.ID, "golden-1")
			if err != nil {
				t.Fatal(err)
			}
			if err := b.store.FinishAudio(t.Context(), a.ID, a.Revision, narrator.Rendering{Keys: map[string]string{"mp3": "token/audio.mp3", "m3u8": "token/audio.m3u8"}, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 2500 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			return []exchange{
				record("GET", audio+"?api_key="+key, nil),
				record("GET", b.audioPath(999)+"?api_key="+key, nil),
			}
		}},
		{"get_transcript", func() []exchange {
			before := record("GET", audio+"/transcript?api_key="+key, nil)
			data, err := transcript.MarshalJSON(&narrator.Transcript{Duration: 2.5, Sentences: []narrator.TranscriptSentence{
				{Start: 0.025, End: 0.6, Text: "T"},
				{Start: 1.3, End: 2.1, Text: "Hello.", Words: []narrator.TranscriptWord{{Start: 1.3, End: 2.1, Text: "hello"}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.media.Put(t.Context(), "token/transcript.json", bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			return []exchange{
				before,
				record("GET", audio+"/transcript?api_key="+key, nil),
				record("GET", b.audioPath(999)+"/transcript?api_key="+key, nil),
			}
		}},
		{"update_audio", func() []exchange {
			return []exchange{
				record("PUT", audio, withKey(map[string]any{"metadata": map[string]string{"section": "sport"}})),
				record("PUT", audio, withKey(map[string]any{"body": " "})),
			}
		}},
		{"list_audios", func() []exchange {
			return []exchange{
				record("GET", audios+"?api_key="+key, nil),
				record("GET", audios+"?page=2&api_key="+key, nil),
				record("GET", audios+"?period=yearly&api_key="+key, nil),
			}
		}},
		{"delete_audio", func() []exchange {
			return []exchange{
				record("DELETE", audio, withKey(map[string]any{})),
				record("DELETE", audio, withKey(map[string]any{})),
			}
		}},
		{"list_projects", func() []exchange {
			return []exchange{
				record("GET", "/api/v3/projects?api_key="+key, nil),
				record("GET", "/api/v3/projects?api_key=nk_wrong", nil),
				record("PATCH", "/api/v3/projects", withKey(map[string]any{})),
			}
		}},
		{"get_progress", func() []exchange {
			progress := b.audioPath("golden-2") + "/progress?api_key=" + key
			created := record("POST", audios, withKey(map[string]any{"body": "Hello. Again.", "external_id": "golden-2"}))
			queued := record("GET", progress, nil)
			// 10 of 40 units in 10 s: 30 s left.
			b.report(t, "golden-2", "holder", 10, 40, "token2/live.m3u8", 10*time.Second)
			return []exchange{
				created,
				queued,
				record("GET", progress, nil),
				record("GET", b.audioPath(999)+"/progress?api_key="+key, nil),
			}
		}},
		{"import_audio", func() []exchange {
			pages := pageServer(t)
			imports := audios + "/import"
			xs := []exchange{
				record("POST", imports, withKey(map[string]any{"url": pages.URL + "/story"})),
				record("POST", imports, withKey(map[string]any{"url": pages.URL + "/story", "external_id": "golden-3", "metadata": map[string]string{"language": "en"}})),
				record("POST", imports, withKey(map[string]any{})),
				record("POST", imports, withKey(map[string]any{"url": pages.URL + "/menu"})),
				record("POST", imports, withKey(map[string]any{"url": pages.URL + "/report.pdf"})),
			}
			// The page server's port changes from run to run.
			for i := range xs {
				xs[i].Body = bytes.ReplaceAll(xs[i].Body, []byte(pages.URL), []byte("http://pages.test"))
			}
			return xs
		}},
	}
	for _, f := range files {
		got, err := json.MarshalIndent(f.run(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", f.name+".golden.json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s changed (-want +got):\n%s(if the change is meant: go test ./internal/httpapi -run TestGoldens -update)", path, diff)
		}
	}
	if *update {
		fmt.Println("golden files rewritten; review the diff")
	}
}
