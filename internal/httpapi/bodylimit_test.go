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
	var read atomic.Int64
	api := httpapi.NewServer(httpapi.Deps{Store: b.store, MediaURL: func(k string) string { return "https://media.test/" + k }})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, &read}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
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
