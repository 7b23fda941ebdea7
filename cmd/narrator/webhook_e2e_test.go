//go:build e2e

package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hookEvent is what the test receiver keeps of a delivery.
type hookEvent struct {
	Action  string `json:"action_type"`
	Project int64  `json:"project_id"`
	ID      int64  `json:"id"`
	State   string `json:"state"`
	Deleted bool   `json:"deleted"`
	Media   []struct {
		URL      json.RawMessage `json:"url"`
		Duration float64         `json:"duration"`
	} `json:"media"`
	CreatedAt time.Time `json:"created_at"`
}

// hookReceiver is a webhook endpoint written from the Standard Webhooks
// specification alone. It verifies every signature, answers 500 while
// failing is set, and keeps one event per webhook-id.
type hookReceiver struct {
	mu       sync.Mutex
	secret   string
	failing  bool
	rejected int                  // requests answered 500
	bad      []string             // requests that did not verify
	events   map[string]hookEvent // by webhook-id
	copies   map[string]int       // accepted requests by webhook-id
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		err = verifyStandardWebhook(h.secret, r.Header, body, time.Now())
	}
	var e hookEvent
	if err == nil {
		err = json.Unmarshal(body, &e)
	}
	if err == nil {
		err = checkEventSchema(e.Action, body)
	}
	if err != nil {
		h.bad = append(h.bad, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if h.failing {
		h.rejected++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	id := r.Header.Get("webhook-id")
	if prev, ok := h.events[id]; ok && (prev.Action != e.Action || prev.ID != e.ID) {
		h.bad = append(h.bad, fmt.Sprintf("webhook-id %s came with %s of %d, then %s of %d", id, prev.Action, prev.ID, e.Action, e.ID))
	}
	h.events[id] = e
	h.copies[id]++
	w.WriteHeader(http.StatusNoContent)
}

// checkEventSchema checks a message against its schema in the OpenAPI
// document's webhooks section.
func checkEventSchema(action string, body []byte) error {
	v, err := contract()
	if err != nil {
		return err
	}
	if action == "webhook.test" {
		return v.CheckSchema("TestEvent", body)
	}
	return v.CheckSchema("AudioEvent", body)
}

// verifyStandardWebhook checks a delivery as the specification says: the
// key is the base64 after "whsec_"; the signed content is
// id.timestamp.body; the header lists "v1,<base64 HMAC-SHA256>" values
// separated by spaces; the timestamp is within five minutes of now.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return errors.New("bad secret")
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return errors.New("missing webhook-id or webhook-timestamp")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("webhook-timestamp too far from now")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, b64, ok := strings.Cut(sig, ","); ok && v == "v1" {
			if got, err := base64.StdEncoding.DecodeString(b64); err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return errors.New("no v1 signature matches")
}

// counts returns how many distinct webhook-ids the receiver accepted per
// "audio action" pair.
func (h *hookReceiver) counts(refs map[int64]string) map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, e := range h.events {
		out[refs[e.ID]+" "+e.Action]++
	}
	return out
}

// TestWebhooksUnderLoad drives creates, updates, deletes and a failure
// through a server that is killed with SIGKILL and restarted, while the
// receiver answers 500 for a while: every event arrives, signed, once per
// webhook-id.
func TestWebhooksUnderLoad(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	addr := freeAddr(t)
	flags := []string{"--engine-standin", "30ms", "--webhooks-allow-private"}
	s := startServer(t, data, addr, flags...)

	rec := &hookReceiver{failing: true, events: map[string]hookEvent{}, copies: map[string]int{}}
	receiver := httptest.NewServer(rec)
	t.Cleanup(receiver.Close)
	status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/webhooks", proj.ID),
		map[string]any{"api_key": acct.APIKey, "url": receiver.URL + "/narrator?source=test"})
	if status != 201 {
		t.Fatalf("create webhook: %d %s", status, raw)
	}
	hook := mustJSON[struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}](t, string(raw))
	rec.mu.Lock()
	rec.secret = hook.Secret
	rec.mu.Unlock()

	audios := fmt.Sprintf("/api/v3/projects/%d/audio", proj.ID)
	refs := map[int64]string{}
	create := func(ref, title, body string) {
		t.Helper()
		status, raw := s.call(t, "POST", audios, map[string]any{"api_key": acct.APIKey, "title": title, "body": body, "external_id": ref})
		if status != 200 {
			t.Fatalf("create %s: %d %s", ref, status, raw)
		}
		refs[mustJSON[audioOut](t, string(raw)).ID] = ref
	}
	for i := range 6 {
		ref := fmt.Sprintf("w%d", i)
		create(ref, "Story "+ref, sentences(ref, 3))
	}
	// An article with nothing to read fails at once.
	create("bad", "", "<p></p>")
	for i := range 6 {
		s.waitProcessed(t, proj.ID, fmt.Sprintf("w%d", i), acct.APIKey, 60*time.Second)
	}
	// New text for two audios: updated, then processed again. The server
	// dies while it reads them.
	for _, ref := range []string{"w0", "w1"} {
		status, raw := s.call(t, "PUT", audios+"/"+ref, map[string]any{"api_key": acct.APIKey, "body": sentences(ref+"-new", 40)})
		if status != 200 {
			t.Fatalf("update %s: %d %s", ref, status, raw)
		}
	}
	waitSynthesizing(t, s.client(t, acct.APIKey), proj.ID, "w0")
	s.stop(t, syscall.SIGKILL)
	rec.mu.Lock()
	rejected := rec.rejected
	rec.failing = false
	rec.mu.Unlock()
	if rejected == 0 {
		t.Fatal("the receiver answered no request with 500 before the kill; the test did not exercise retries")
	}

	s = startServer(t, data, addr, flags...)
	for _, ref := range []string{"w4", "w5"} {
		status, raw := s.call(t, "DELETE", audios+"/"+ref, map[string]any{"api_key": acct.APIKey})
		if status != 200 {
			t.Fatalf("delete %s: %d %s", ref, status, raw)
		}
	}
	for _, ref := range []string{"w0", "w1"} {
		s.waitProcessed(t, proj.ID, ref, acct.APIKey, 90*time.Second)
	}

	want := map[string]int{"bad audio.failed": 1, "w0 audio.updated": 1, "w1 audio.updated": 1, "w4 audio.deleted": 1, "w5 audio.deleted": 1}
	for i := range 6 {
		want[fmt.Sprintf("w%d audio.processed", i)] = 1
	}
	want["w0 audio.processed"], want["w1 audio.processed"] = 2, 2
	deadline := time.Now().Add(2 * time.Minute)
	for !maps.Equal(rec.counts(refs), want) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	got := rec.counts(refs)
	all := maps.Clone(want)
	maps.Copy(all, got)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if got[k] != want[k] {
			t.Errorf("%s: %d distinct webhook-ids, want %d", k, got[k], want[k])
		}
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) > 0 {
		t.Errorf("requests that failed verification: %q", rec.bad)
	}
	dups := 0
	for id, e := range rec.events {
		dups += rec.copies[id] - 1
		if e.Project != proj.ID {
			t.Errorf("%s: project_id %d, want %d", id, e.Project, proj.ID)
		}
		if time.Since(e.CreatedAt) > 10*time.Minute {
			t.Errorf("%s: created_at %v", id, e.CreatedAt)
		}
		wantState := map[string]string{"audio.processed": "processed", "audio.failed": "failed", "audio.updated": "unprocessed"}[e.Action]
		if e.Action != "audio.deleted" && e.State != wantState {
			t.Errorf("%s of %s: state %q, want %q", e.Action, refs[e.ID], e.State, wantState)
		}
		if (e.Action == "audio.deleted") != e.Deleted {
			t.Errorf("%s of %s: deleted %v", e.Action, refs[e.ID], e.Deleted)
		}
		if e.Action == "audio.processed" {
			for _, m := range e.Media {
				var u string
				if json.Unmarshal(m.URL, &u) != nil || !strings.HasPrefix(u, s.base+"/media/") || m.Duration <= 0 {
					t.Errorf("processed %s: media url %s, duration %v", refs[e.ID], m.URL, m.Duration)
				}
			}
		}
	}
	t.Logf("%d events, %d duplicate deliveries, %d requests answered 500", len(rec.events), dups, rec.rejected)
}
