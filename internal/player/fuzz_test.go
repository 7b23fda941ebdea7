package player_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzPlayer sends arbitrary listening events, and arbitrary query strings
// to the page and its status, through the real handler on a real SQLite
// store. No answer may be a 5xx; events answer 204 or a JSON 4xx, the
// status JSON, and the page HTML.
func FuzzPlayer(f *testing.F) {
	b := setup(f)
	a := b.audio(f, "a", "https://news.test/a")
	b.finish(f, a, "tok")
	f.Add(uint8(0), uint8(0), []byte(fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"play"}`, b.project.ID, a.ID)))
	f.Add(uint8(0), uint8(1), []byte(fmt.Sprintf(`{"project_id":%d,"audio_id":%d,"event":"progress_25"}{}`, b.project.ID, a.ID)))
	f.Add(uint8(0), uint8(2), []byte(`{"project_id":-1,"audio_id":1e99,"event":"x","extra":1}`))
	for _, q := range []string{"external_id=a", "url=https%3A%2F%2Fnews.test%2Fa%23top", "url=javascript:x", "external_id=%00", "x=%zz", ""} {
		f.Add(uint8(1), uint8(0), []byte(q))
		f.Add(uint8(2), uint8(0), []byte(q))
	}
	contentTypes := []string{"application/json", "text/plain;charset=UTF-8", "", "application/x-www-form-urlencoded"}
	h := b.srv.Config.Handler
	f.Fuzz(func(t *testing.T, route, ct uint8, data []byte) {
		var req *http.Request
		switch route % 3 {
		case 0:
			req = httptest.NewRequest("POST", "/embed/events", bytes.NewReader(data))
			if c := contentTypes[int(ct)%len(contentTypes)]; c != "" {
				req.Header.Set("Content-Type", c)
			}
		case 1:
			req = httptest.NewRequest("GET", fmt.Sprintf("/embed/%d", b.project.ID), nil)
			req.URL.RawQuery = string(data)
		default:
			req = httptest.NewRequest("GET", fmt.Sprintf("/embed/%d/status", b.project.ID), nil)
			req.URL.RawQuery = string(data)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		res := w.Result()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s: status %d, body %s", req.Method, req.URL, res.StatusCode, w.Body)
		}
		ct2 := res.Header.Get("Content-Type")
		switch {
		case route%3 == 0 && res.StatusCode == http.StatusNoContent:
		case route%3 == 1:
			if !strings.HasPrefix(ct2, "text/html") {
				t.Fatalf("page: status %d, Content-Type %q", res.StatusCode, ct2)
			}
		default:
			if ct2 != "application/json" || !json.Valid(w.Body.Bytes()) {
				t.Fatalf("status %d, Content-Type %q, body %s", res.StatusCode, ct2, w.Body)
			}
		}
	})
}
