package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator/internal/httpapi"
)

// countingBody counts the bytes a handler reads from a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countingServer serves the API of b's store and returns it with the count of the bytes its
// handlers read from request bodies.
func countingServer(t *testing.T, b *testBundle) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	read := new(atomic.Int64)
	api := httpapi.NewServer(httpapi.Deps{Store: b.store, MediaURL: func(k string) string { return "https://media.test/" + k }})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, read}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, read
}

// zeros is an endless body of spaces: a JSON body only a reader that reads
// it all would find fault with.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestKeyCheckedBeforeBody: a 10 MB POST without a valid API key gets a
// 401 without its body being read, whether its length is declared or not
// and whether a key is given in a header or not at all.
func TestKeyCheckedBeforeBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv, read := countingServer(t, b)
	const size = 10 << 20
	for _, tc := range []struct {
		name    string
		header  string
		chunked bool
	}{
		{"bad key, length declared", "Bearer not-a-key", false},
		{"bad key, chunked", "Bearer not-a-key", true},
		{"no key, length declared", "", false},
		{"no key, chunked", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read.Store(0)
			var body io.Reader = io.LimitReader(zeros{}, size)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length
			}
			req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+fmt.Sprintf("/api/v3/projects/%d/audio", b.project.ID), body)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.chunked {
				req.ContentLength = size
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), `"code":20`) {
				t.Errorf("status %d %s, want 401 with code 20", res.StatusCode, raw)
			}
			limit := int64(0)
			if tc.header == "" && tc.chunked {
				// A key may be in the body: it is read up to the body limit.
				limit = httpapi.DefaultMaxBodyBytes + 1
			}
			if n := read.Load(); n > limit {
				t.Errorf("the handler read %d bytes of the body, want at most %d", n, limit)
			}
		})
	}
	// A good key in a header, and the body is read.
	res := b.do(t, "POST", b.audiosPath(), map[string]any{"title": "T", "body": "Text."}, "Authorization", "Bearer "+b.key)
	if res.status != http.StatusCreated && res.status != http.StatusOK {
		t.Errorf("create with a header key: %d %s", res.status, res.body)
	}
}

// TestBodyKeyCheckedBeforeLargeBody: a large body whose key is in the
// body has that key checked once its first KeyPeekBytes are read, not
// after the whole body is buffered; a key further in answers 401 unread.
func TestBodyKeyCheckedBeforeLargeBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv, read := countingServer(t, b)
	text := strings.Repeat("€€€€ ", 18_000) // 90,000 characters, 234 KB
	post := func(contentType, body string) (int, string) {
		t.Helper()
		read.Store(0)
		req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+fmt.Sprintf("/api/v3/projects/%d/audio", b.project.ID), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(raw)
	}
	form := func(key string) string {
		return "api_key=" + key + "&title=T&body=" + strings.ReplaceAll(text, " ", "+")
	}
	for _, tc := range []struct{ name, contentType, body string }{
		{"JSON, wrong key first", "application/json", `{"api_key":"not-a-key","title":"T","body":"` + text + `"}`},
		{"form, wrong key first", "application/x-www-form-urlencoded", form("not-a-key")},
		{"JSON, key after the first bytes", "application/json", `{"title":"T","body":"` + text + `","api_key":"` + b.key + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.contentType, tc.body)
			if status != http.StatusUnauthorized || !strings.Contains(body, `"code":20`) {
				t.Errorf("status %d %s, want 401 with code 20", status, body)
			}
			if n := read.Load(); n > 2*httpapi.KeyPeekBytes {
				t.Errorf("the handler read %d bytes of a %d-byte body before refusing its key, want at most %d", n, len(tc.body), 2*httpapi.KeyPeekBytes)
			}
		})
	}
	// A good key first, and the whole body is read.
	for _, ct := range []string{"application/json", "application/x-www-form-urlencoded"} {
		body := `{"api_key":"` + b.key + `","title":"T","body":"` + text + `"}`
		if ct != "application/json" {
			body = form(b.key)
		}
		if status, raw := post(ct, body); status != http.StatusCreated && status != http.StatusOK {
			t.Errorf("%s with the key first: %d %s", ct, status, raw)
		}
	}
}
