package neural_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/neural"
)

// piperRepository serves files with the layout of the Piper voice repository: voices.json at
// its root, naming each voice's files by path with their sizes and MD5 digests. lie, if set,
// gives a file's index entry another digest.
func piperRepository(t *testing.T, files map[string]string, lie string) *httptest.Server {
	t.Helper()
	type entry struct {
		Size int64  `json:"size_bytes"`
		MD5  string `json:"md5_digest"`
	}
	index := map[string]map[string]any{}
	entries := map[string]entry{}
	for p, body := range files {
		sum := md5.Sum([]byte(body))
		e := entry{Size: int64(len(body)), MD5: hex.EncodeToString(sum[:])}
		if p == lie {
			e.MD5 = strings.Repeat("0", 32)
		}
		entries[p] = e
	}
	index["en_US-tiny-medium"] = map[string]any{"key": "en_US-tiny-medium", "files": entries}
	raw, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/mirror/")
		if p == "voices.json" {
			w.Write(raw)
			return
		}
		body, ok := files[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDownload(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"en/en_US/tiny/medium/en_US-tiny-medium.onnx":      "model bytes",
		"en/en_US/tiny/medium/en_US-tiny-medium.onnx.json": `{"audio":{}}`,
		"en/en_US/tiny/medium/MODEL_CARD":                  "# Model card\n\n* License: CC-BY-4.0\n",
	}
	srv := piperRepository(t, files, "")
	dir := t.TempDir()
	got, err := neural.Download(t.Context(), srv.Client(), srv.URL+"/mirror/", "en_US-tiny-medium", dir)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{got.Model: "model bytes", got.Config: `{"audio":{}}`} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	card, err := os.Open(got.Card)
	if err != nil {
		t.Fatal(err)
	}
	defer card.Close()
	if l := neural.ModelCardLicense(card); l != "CC-BY-4.0" {
		t.Errorf("licence from the model card = %q, want CC-BY-4.0", l)
	}

	// A file whose digest is not the index's, an unknown voice and a repository that is not
	// http are refused, saying why.
	bad := piperRepository(t, files, "en/en_US/tiny/medium/en_US-tiny-medium.onnx")
	for _, tc := range []struct{ base, name, want string }{
		{bad.URL + "/mirror/", "en_US-tiny-medium", "MD5"},
		{srv.URL + "/mirror/", "en_US-nobody-low", "lists no voice"},
		{"ftp://example.com/", "en_US-tiny-medium", "not an http"},
	} {
		_, err := neural.Download(t.Context(), srv.Client(), tc.base, tc.name, filepath.Join(t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Download(%s, %s) = %v, want an error saying %q", tc.base, tc.name, err, tc.want)
		}
	}
}
