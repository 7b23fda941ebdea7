package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/narrator/narrator"
)

func TestPublication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"title": "Hi", "body": "Hello.", "external_id": "pub-1"})
	path := b.audioPath("pub-1") + "/publication"
	auth := []string{"Authorization", "Bearer " + b.key}

	// Audios are published unless their publisher decides otherwise.
	got := b.do(t, "GET", path, nil, auth...).object(t)
	if got["state"] != "published" || got["public"] != true || got["publish_at"] != nil || got["updated_at"] != nil {
		t.Errorf("default publication = %v", got)
	}
	if got["audio_id"] != a["id"] {
		t.Errorf("audio_id = %v, want %v", got["audio_id"], a["id"])
	}

	r := b.do(t, "PUT", path, map[string]any{"state": "draft"}, auth...)
	if r.status != http.StatusOK || r.object(t)["state"] != "draft" || r.object(t)["public"] != false {
		t.Fatalf("draft: %d %s", r.status, r.body)
	}
	r = b.do(t, "PUT", path, map[string]any{"state": "scheduled", "publish_at": "2999-01-02T03:04:05Z"}, auth...)
	if m := r.object(t); r.status != http.StatusOK || m["state"] != "scheduled" || m["publish_at"] != "2999-01-02T03:04:05Z" || m["public"] != false {
		t.Fatalf("scheduled: %d %s", r.status, r.body)
	}
	// A time already past publishes at once.
	r = b.do(t, "PUT", path, map[string]any{"state": "scheduled", "publish_at": "2001-01-02T03:04:05+01:00"}, auth...)
	if m := r.object(t); m["state"] != "published" || m["publish_at"] != "2001-01-02T02:04:05Z" || m["public"] != true {
		t.Errorf("scheduled in the past: %s", r.body)
	}

	// The v3 audio keeps its shape whatever the publication.
	v3 := b.do(t, "GET", b.audioPath("pub-1"), nil, auth...).object(t)
	for _, k := range []string{"publish_at", "public", "publication"} {
		if _, ok := v3[k]; ok {
			t.Errorf("the v3 audio has %s", k)
		}
	}

	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "state is required"},
		{map[string]any{"state": "hidden"}, "state must be"},
		{map[string]any{"state": "scheduled"}, "publish_at is required"},
		{map[string]any{"state": "draft", "publish_at": "2999-01-02T03:04:05Z"}, "publish_at is only"},
		{map[string]any{"state": "scheduled", "publish_at": "tomorrow"}, "RFC 3339"},
	} {
		wantError(t, b.do(t, "PUT", path, tc.body, auth...), http.StatusBadRequest, 10, tc.msg)
	}
	wantError(t, b.do(t, "GET", b.audioPath("nothing")+"/publication", nil, auth...), http.StatusNotFound, 30, "")
	wantError(t, b.do(t, "GET", path, nil), http.StatusUnauthorized, 20, "")
	_, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "PUT", path, map[string]any{"state": "draft"}, "Authorization", "Bearer "+otherKey), http.StatusNotFound, 30, "")
	b.do(t, "DELETE", b.audioPath("pub-1"), nil, auth...)
	wantError(t, b.do(t, "PUT", path, map[string]any{"state": "draft"}, auth...), http.StatusNotFound, 30, "")
}

func TestAccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	path := fmt.Sprintf("/api/v3/projects/%d/access", b.project.ID)
	auth := []string{"Authorization", "Bearer " + b.key}

	got := b.do(t, "GET", path, nil, auth...)
	if want := fmt.Sprintf(`{"project_id":%d,"mode":"public","allowed_origins":[],"draft_new_audios":false,"download_button":false,"has_signing_secret":false,"updated_at":null}`, b.project.ID); strings.TrimSpace(string(got.body)) != want {
		t.Errorf("default access = %s, want %s", got.body, want)
	}
	wantError(t, b.do(t, "PUT", path, map[string]any{"mode": "signed"}, auth...), http.StatusBadRequest, 10, "signing secret")
	wantError(t, b.do(t, "PUT", path, map[string]any{"allowed_origins": []string{"news.example"}}, auth...), http.StatusBadRequest, 10, "not an origin")

	rotated := b.do(t, "POST", path+"/rotate-secret", nil, auth...).object(t)
	secret, _ := rotated["signing_secret"].(string)
	if !strings.HasPrefix(secret, narrator.EmbedSecretPrefix) || rotated["has_signing_secret"] != true {
		t.Fatalf("rotation = %v", rotated)
	}
	r := b.do(t, "PUT", path, map[string]any{"mode": "signed", "allowed_origins": "https://News.Example, http://localhost:8080", "draft_new_audios": true}, auth...)
	m := r.object(t)
	if r.status != http.StatusOK || m["mode"] != "signed" || m["draft_new_audios"] != true || m["signing_secret"] != nil {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	if fmt.Sprint(m["allowed_origins"]) != "[https://news.example http://localhost:8080]" {
		t.Errorf("allowed_origins = %v", m["allowed_origins"])
	}
	// Fields left out keep their values.
	m = b.do(t, "PUT", path, map[string]any{"draft_new_audios": false}, auth...).object(t)
	if m["mode"] != "signed" || m["draft_new_audios"] != false || fmt.Sprint(m["allowed_origins"]) != "[https://news.example http://localhost:8080]" {
		t.Errorf("partial update = %v", m)
	}
	stored, err := b.store.ProjectAccess(t.Context(), b.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.SigningSecret != secret {
		t.Error("the stored secret is not the one the rotation answered")
	}

	// New audios of a project that makes them wait are drafts.
	b.do(t, "PUT", path, map[string]any{"draft_new_audios": true}, auth...)
	b.create(t, map[string]any{"title": "Hi", "body": "Hello.", "external_id": "waits"})
	if m := b.do(t, "GET", b.audioPath("waits")+"/publication", nil, auth...).object(t); m["state"] != "draft" {
		t.Errorf("new audio's publication = %v, want a draft", m)
	}
	_, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "GET", path, nil, "Authorization", "Bearer "+otherKey), http.StatusNotFound, 30, "")
}
