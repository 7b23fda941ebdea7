package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/openapitest"
)

func (b *testBundle) hooksPath(rest ...any) string {
	p := fmt.Sprintf("/api/v3/projects/%d/webhooks", b.project.ID)
	for _, r := range rest {
		p += fmt.Sprintf("/%v", r)
	}
	return p
}

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]any{"api_key": b.key}
	with := func(m map[string]any) map[string]any {
		m["api_key"] = b.key
		return m
	}
	r := b.do(t, "POST", b.hooksPath(), with(map[string]any{"url": "https://hooks.example.com/in"}))
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	h := r.object(t)
	secret, _ := h["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || h["enabled"] != true || h["disabled_at"] != nil {
		t.Errorf("created webhook %v; want a whsec_ secret, enabled", h)
	}
	if diff := cmp.Diff([]any{"audio.processed", "audio.failed", "audio.updated", "audio.deleted"}, h["events"]); diff != "" {
		t.Errorf("default events (-want +got):\n%s", diff)
	}
	id := int64(h["id"].(float64))

	// Form bodies and comma-separated events work too.
	r = b.do(t, "POST", b.hooksPath()+"?api_key="+b.key, url.Values{"url": {"https://x.example/"}, "events": {"audio.failed,audio.deleted"}})
	if r.status != 201 {
		t.Fatalf("create from a form: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff([]any{"audio.failed", "audio.deleted"}, r.object(t)["events"]); diff != "" {
		t.Errorf("events from a form (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		body map[string]any
		part string
	}{
		{"no url", map[string]any{}, "url is required"},
		{"ftp", map[string]any{"url": "ftp://x.example/"}, "http or https"},
		{"too long", map[string]any{"url": "https://x.example/" + strings.Repeat("a", 3000)}, "at most"},
		{"unknown event", map[string]any{"url": "https://x.example/", "events": []string{"audio.created"}}, "audio.created"},
		{"events not strings", map[string]any{"url": "https://x.example/", "events": 3}, "array of strings"},
		{"events empty", map[string]any{"url": "https://x.example/", "events": []string{}}, "at least one event"},
		{"events blank", map[string]any{"url": "https://x.example/", "events": ""}, "at least one event"},
		{"bad port", map[string]any{"url": "https://x.example:99999/"}, "port"},
		{"url not a string", map[string]any{"url": 3}, "url must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "POST", b.hooksPath(), with(tc.body)), 400, 10, tc.part)
		})
	}

	r = b.do(t, "GET", b.hooksPath()+"?api_key="+b.key, nil)
	if list := r.array(t); r.status != 200 || len(list) != 2 || list[0]["secret"] != nil {
		t.Errorf("list: %d %s; want two endpoints without secrets", r.status, r.body)
	}
	r = b.do(t, "POST", b.hooksPath(id, "rotate-secret"), key)
	if got := r.object(t)["secret"]; r.status != 200 || got == secret || !strings.HasPrefix(got.(string), "whsec_") {
		t.Errorf("rotate: %d %s; want a new secret", r.status, r.body)
	}
	r = b.do(t, "POST", b.hooksPath(id, "test"), key)
	if r.status != 202 {
		t.Fatalf("test: %d %s", r.status, r.body)
	}
	d := r.object(t)
	payload := d["payload"].(map[string]any)
	if d["event"] != "webhook.test" || d["state"] != "pending" || payload["action_type"] != "webhook.test" || payload["project_id"] != float64(b.project.ID) {
		t.Errorf("test delivery %v", d)
	}
	r = b.do(t, "POST", b.hooksPath(id, "deliveries", int64(d["id"].(float64)), "resend"), key)
	if r.status != 202 || r.object(t)["message_id"] != d["message_id"] {
		t.Errorf("resend: %d %s; want the same message_id %v", r.status, r.body, d["message_id"])
	}
	r = b.do(t, "GET", b.hooksPath(id, "deliveries")+"?api_key="+b.key, nil)
	if list := r.array(t); r.status != 200 || len(list) != 1 {
		t.Errorf("deliveries: %d %s", r.status, r.body)
	}
	wantError(t, b.do(t, "GET", b.hooksPath(id, "deliveries")+"?limit=0&api_key="+b.key, nil), 400, 10, "limit")
	r = b.do(t, "POST", b.hooksPath(id, "enable"), key)
	if r.status != 200 || r.object(t)["enabled"] != true {
		t.Errorf("enable: %d %s", r.status, r.body)
	}

	// Another account sees none of it.
	otherAccount, otherKey := b.newAccount(t, "Other")
	b.newProject(t, otherAccount)
	wantError(t, b.do(t, "GET", b.hooksPath()+"?api_key="+otherKey, nil), 404, 30, "")
	wantError(t, b.do(t, "POST", b.hooksPath(id, "test"), map[string]any{"api_key": otherKey}), 404, 30, "")

	wantError(t, b.do(t, "POST", b.hooksPath(999, "test"), key), 404, 30, "")
	wantError(t, b.do(t, "POST", b.hooksPath(id, "deliveries", 999, "resend"), key), 404, 30, "")
	wantError(t, b.do(t, "POST", b.hooksPath("x", "test"), key), 404, 30, "")
	wantError(t, b.do(t, "PUT", b.hooksPath(id), key), 405, 10, "")
	r = b.do(t, "DELETE", b.hooksPath(id), key)
	if r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, b.do(t, "GET", b.hooksPath(id)+"?api_key="+b.key, nil), 404, 30, "")
	wantError(t, b.do(t, "DELETE", b.hooksPath(id), key), 404, 30, "")
}

// TestWebhookTestWhenFull: an endpoint with narrator.MaxPendingDeliveries
// pending refuses another test with 429 and a clear error.
func TestWebhookTestWhenFull(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]any{"api_key": b.key}
	r := b.do(t, "POST", b.hooksPath(), map[string]any{"api_key": b.key, "url": "https://hooks.example.com/in"})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := int64(r.object(t)["id"].(float64))
	// Filled through the store: through the API, the calls' own rate limit
	// would refuse them first.
	for i := range narrator.MaxPendingDeliveries {
		if _, err := b.store.TestWebhook(t.Context(), b.project.ID, id); err != nil {
			t.Fatalf("test %d: %v", i, err)
		}
	}
	wantError(t, b.do(t, "POST", b.hooksPath(id, "test"), key), 429, 60, "deliveries pending")
}

// TestEventBodyIsTheV3Audio checks that a delivery's payload is the audio
// exactly as GET answers it, with the event's fields and the media's
// durations added.
func TestEventBodyIsTheV3Audio(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "POST", b.hooksPath(), map[string]any{"api_key": b.key, "url": "https://hooks.example.com/in"})
	hookID := int64(r.object(t)["id"].(float64))
	a := b.create(t, map[string]any{"body": "Hello.", "external_id": "e1", "metadata": map[string]string{"k": "v"}})
	id := int64(a["id"].(float64))
	if err := b.store.FinishAudio(t.Context(), id, 1, narrator.Rendering{Keys: map[string]string{"mp3": "tok/audio.mp3", "m3u8": "tok/audio.m3u8"}, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 2500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	got := b.do(t, "GET", b.audioPath(id)+"?api_key="+b.key, nil).object(t)
	r = b.do(t, "GET", b.hooksPath(hookID, "deliveries")+"?api_key="+b.key, nil)
	ds := r.array(t)
	if len(ds) != 1 {
		t.Fatalf("deliveries: %s", r.body)
	}
	payload := ds[0]["payload"].(map[string]any)
	created, err := time.Parse(time.RFC3339Nano, payload["created_at"].(string))
	if err != nil || time.Since(created) > time.Minute {
		t.Errorf("created_at %v: %v", payload["created_at"], err)
	}
	want := got
	want["action_type"], want["project_id"], want["created_at"] = "audio.processed", float64(b.project.ID), payload["created_at"]
	for _, m := range want["media"].([]any) {
		m.(map[string]any)["duration"] = 2.5
	}
	if diff := cmp.Diff(want, payload); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
}

func TestEventBody(t *testing.T) {
	t.Parallel()
	render := httpapi.EventBody(func(key string) string { return "https://m.test/" + key })
	at := time.Date(2025, 3, 4, 5, 6, 7, 8000, time.UTC)
	contract := openapitest.MustLoad(t)
	a := &narrator.Audio{ID: 7, ProjectID: 3, ExternalID: "ext", State: narrator.StateUnprocessed, DurationMS: 1500,
		Metadata: map[string]string{"k": "<v>"}, Media: []narrator.Media{
			{ID: 1, ContentType: narrator.ContentTypeMP3, Key: "t/a.mp3"}, {ID: 2, ContentType: narrator.ContentTypeM3U8, Key: "t/a.m3u8"}}}
	for _, tc := range []struct {
		name string
		e    narrator.Event
		want string
	}{
		{"updated", narrator.Event{Type: narrator.EventAudioUpdated, ProjectID: 3, Audio: a, CreatedAt: at},
			`{"id":7,"external_id":"ext","state":"unprocessed","deleted":false,"metadata":{"k":"<v>"},` +
				`"media":[{"id":1,"content_type":"mp3","url":[],"duration":0},{"id":2,"content_type":"m3u8","url":[],"duration":0}],` +
				`"action_type":"audio.updated","project_id":3,"created_at":"2025-03-04T05:06:07.000008Z"}`},
		{"test", narrator.Event{Type: narrator.EventWebhookTest, ProjectID: 3, CreatedAt: at},
			`{"action_type":"webhook.test","project_id":3,"created_at":"2025-03-04T05:06:07.000008Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(&tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("body:\n got  %s\n want %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Error("body is not JSON")
			}
			// The body is what the OpenAPI document's webhooks section says.
			schema := "AudioEvent"
			if tc.e.Audio == nil {
				schema = "TestEvent"
			}
			if err := contract.CheckSchema(schema, got); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestWebhookTriggersLimited: test and resend calls, which each queue a
// delivery retried for a day, are limited per endpoint: past the burst, a
// call is refused with 429, the v3 error body and Retry-After, and queues
// nothing; another endpoint has its own burst.
func TestWebhookTriggersLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := map[string]any{"api_key": b.key}
	newHook := func() int64 {
		r := b.do(t, "POST", b.hooksPath(), map[string]any{"api_key": b.key, "url": "https://hooks.example.com/in"})
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		return int64(r.object(t)["id"].(float64))
	}
	id := newHook()
	r := b.do(t, "POST", b.hooksPath(id, "test"), key)
	if r.status != 202 {
		t.Fatalf("test: %d %s", r.status, r.body)
	}
	first := int64(r.object(t)["id"].(float64))
	var refused response
	for i := range 3 * narrator.WebhookTriggerBurst {
		path := b.hooksPath(id, "test")
		if i%2 == 1 {
			path = b.hooksPath(id, "deliveries", first, "resend")
		}
		if r := b.do(t, "POST", path, key); r.status != 202 {
			refused = r
			if i+1 < narrator.WebhookTriggerBurst {
				t.Fatalf("call %d of the burst of %d refused: %d %s", i+2, narrator.WebhookTriggerBurst, r.status, r.body)
			}
			break
		}
	}
	if refused.status == 0 {
		t.Fatalf("%d test and resend calls in a row all accepted", 3*narrator.WebhookTriggerBurst+1)
	}
	wantError(t, refused, 429, 60, "Try again in")
	if refused.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	// Another endpoint of the account has its own burst.
	if r := b.do(t, "POST", b.hooksPath(newHook(), "test"), key); r.status != 202 {
		t.Errorf("another endpoint's test: %d %s", r.status, r.body)
	}
}
