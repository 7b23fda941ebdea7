package neural_test

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/neural"
)

// indexEntry is a file's entry in voices.json.
type indexEntry struct {
	Size   int64  `json:"size_bytes"`
	MD5    string `json:"md5_digest"`
	SHA256 string `json:"sha256_digest,omitempty"`
}

// piperRepository serves files under /mirror/ with the layout of the Piper voice repository:
// voices.json at its root, naming each voice's files by path with their sizes and MD5
// digests, and their SHA-256 if withSHA256. edit, if set, changes an entry, to make the index
// lie. It serves https, with a certificate that the client it returns trusts, unless plain.
func piperRepository(t *testing.T, files map[string]string, withSHA256, plain bool, edit func(p string, e *indexEntry)) (*httptest.Server, *http.Client) {
	t.Helper()
	entries := map[string]indexEntry{}
	for p, body := range files {
		m, s := md5.Sum([]byte(body)), sha256.Sum256([]byte(body))
		e := indexEntry{Size: int64(len(body)), MD5: hex.EncodeToString(m[:])}
		if withSHA256 {
			e.SHA256 = hex.EncodeToString(s[:])
		}
		if edit != nil {
			edit(p, &e)
		}
		entries[p] = e
	}
	raw, err := json.Marshal(map[string]any{"en_US-tiny-medium": map[string]any{"key": "en_US-tiny-medium", "files": entries}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})
	var srv *httptest.Server
	if plain {
		srv = httptest.NewServer(h)
	} else {
		srv = httptest.NewTLSServer(h)
	}
	t.Cleanup(srv.Close)
	return srv, srv.Client()
}

var repoFiles = map[string]string{
	"en/en_US/tiny/medium/en_US-tiny-medium.onnx":      "model bytes",
	"en/en_US/tiny/medium/en_US-tiny-medium.onnx.json": `{"audio":{}}`,
	"en/en_US/tiny/medium/MODEL_CARD":                  "# Model card\n\n* License: CC-BY-4.0\n",
}

const repoModel = "en/en_US/tiny/medium/en_US-tiny-medium.onnx"

func TestDownload(t *testing.T) {
	t.Parallel()
	for _, withSHA256 := range []bool{true, false} {
		srv, client := piperRepository(t, repoFiles, withSHA256, false, nil)
		got, err := neural.Download(t.Context(), client, srv.URL+"/mirror/", "en_US-tiny-medium", t.TempDir(), neural.DownloadOptions{})
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
		if l := neural.ModelCardLicense(card); l != "CC-BY-4.0" {
			t.Errorf("licence from the model card = %q, want CC-BY-4.0", l)
		}
		card.Close()
		// Each file is reported with its SHA-256 and what the index let it be checked against.
		wantChecked := "MD5"
		if withSHA256 {
			wantChecked = "SHA-256 and MD5"
		}
		if len(got.Files) != 3 {
			t.Fatalf("files %+v, want 3", got.Files)
		}
		for _, f := range got.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != int64(len(b)) || f.Checked != wantChecked || !strings.HasPrefix(f.URL, srv.URL+"/mirror/en/") {
				t.Errorf("file %+v: want SHA-256 %x of %d bytes, checked against %s", f, sum, len(b), wantChecked)
			}
		}
	}
}

// TestDownloadRefuses checks what Download will not install: a file whose digest is not the
// index's (its SHA-256, even where its MD5 matches), an unknown voice, a repository that is
// not http, and, unless allowed, one over plain http or an https one that redirects to http.
func TestDownloadRefuses(t *testing.T) {
	t.Parallel()
	good, goodClient := piperRepository(t, repoFiles, true, false, nil)
	badMD5, badMD5Client := piperRepository(t, repoFiles, false, false, func(p string, e *indexEntry) {
		if p == repoModel {
			e.MD5 = strings.Repeat("0", 32)
		}
	})
	// Another model with the MD5 the index gives, as a collision would have it: the SHA-256
	// tells.
	badSHA, badSHAClient := piperRepository(t, repoFiles, true, false, func(p string, e *indexEntry) {
		if p == repoModel {
			e.SHA256 = strings.Repeat("0", 64)
		}
	})
	plain, plainClient := piperRepository(t, repoFiles, true, true, nil)
	downgrade := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(downgrade.Close)
	for _, tc := range []struct {
		name   string
		client *http.Client
		base   string
		voice  string
		want   string
		is     error
	}{
		{"MD5 differs", badMD5Client, badMD5.URL + "/mirror/", "en_US-tiny-medium", "MD5", nil},
		{"SHA-256 differs", badSHAClient, badSHA.URL + "/mirror/", "en_US-tiny-medium", "SHA-256", nil},
		{"unknown voice", goodClient, good.URL + "/mirror/", "en_US-nobody-low", "lists no voice", nil},
		{"not http", goodClient, "ftp://example.com/", "en_US-tiny-medium", "not an http", nil},
		{"plain http", plainClient, plain.URL + "/mirror/", "en_US-tiny-medium", "not https", neural.ErrInsecureRepository},
		{"redirect to http", downgrade.Client(), downgrade.URL + "/mirror/", "en_US-tiny-medium", "redirected to http", neural.ErrInsecureRepository},
	} {
		_, err := neural.Download(t.Context(), tc.client, tc.base, tc.voice, t.TempDir(), neural.DownloadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: Download(%s, %s) = %v, want an error saying %q", tc.name, tc.base, tc.voice, err, tc.want)
		}
	}
	// The operator may allow plain http.
	got, err := neural.Download(t.Context(), plainClient, plain.URL+"/mirror/", "en_US-tiny-medium", t.TempDir(), neural.DownloadOptions{AllowHTTP: true})
	if err != nil || filepath.Base(got.Model) != "en_US-tiny-medium.onnx" {
		t.Errorf("plain http, allowed: %+v, %v", got, err)
	}
}
