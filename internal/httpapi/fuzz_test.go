package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/narrator/narrator"
)

// FuzzRequest sends arbitrary bodies (and, for the list route, arbitrary
// query strings) to the API's routes that read a body, through the real
// handler on a real SQLite store: request decoding, then validation, then
// the store. Every answer must be a 2xx or a 4xx, never a 5xx, and carry
// JSON: an error body with a known code and a message for a 4xx.
func FuzzRequest(f *testing.F) {
	b := setup(f)
	a := &narrator.Audio{ProjectID: b.project.ID, Title: "T", Body: "Hello."}
	if _, err := b.store.CreateAudio(f.Context(), a); err != nil {
		f.Fatal(err)
	}
	routes := []struct{ method, path string }{
		{"POST", b.audiosPath()},
		{"PUT", b.audioPath(a.ID)},
		{"POST", fmt.Sprintf("/api/v3/projects/%d/pronunciations", b.project.ID)},
		{"POST", fmt.Sprintf("/api/v3/projects/%d/webhooks", b.project.ID)},
		{"GET", b.audiosPath()}, // the body is the query string
	}
	contentTypes := []string{"application/json", "application/x-www-form-urlencoded", "", "text/plain; charset=utf-8", "application/json; charset=\""}
	for i := range routes {
		for _, body := range []string{
			`{"title":"T","body":"# Hi\n\n- item","author":"A","article_url":"https://x.y/a","external_id":42,"metadata":{"k":"v"}}`,
			`{"body":"<speak>Hi</speak>","metadata":null,"title":null}`,
			`{"phrase":"NASA","say":"nasa"}`, `{"url":"https://example.com/hook","events":["audio.processed"]}`,
			"title=T&body=Hello&metadata[k]=v", "period=daily&page=2", `{"page":"x"}`,
			`{"title":1}`, `{"metadata":{"k":1}}`, `{"events":[]}`, `[1]`, `{}{}`, `{"a":` + "\xff", "",
		} {
			f.Add(uint8(i), uint8(i), []byte(body))
		}
	}
	h := b.srv.Config.Handler
	f.Fuzz(func(t *testing.T, route, ct uint8, body []byte) {
		rt := routes[int(route)%len(routes)]
		var req *http.Request
		if rt.method == "GET" {
			req = httptest.NewRequest(rt.method, rt.path, nil)
			req.URL.RawQuery = string(body)
		} else {
			req = httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		}
		if c := contentTypes[int(ct)%len(contentTypes)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		req.Header.Set("X-Api-Key", b.key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		res := w.Result()
		if res.StatusCode >= 500 || res.StatusCode < 200 || (res.StatusCode >= 300 && res.StatusCode < 400) {
			t.Fatalf("%s %s with %q: status %d, body %s", rt.method, rt.path, body, res.StatusCode, w.Body)
		}
		if got := res.Header.Get("Content-Type"); got != "application/json" {
			t.Fatalf("Content-Type %q", got)
		}
		if res.StatusCode < 300 {
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("status %d with a body that is not JSON: %s", res.StatusCode, w.Body)
			}
			return
		}
		var e struct {
			Code    int
			Message string
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Message == "" || e.Code < 10 || e.Code > 49 {
			t.Fatalf("status %d with error body %s", res.StatusCode, w.Body)
		}
	})
}
