package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/narrator/narrator/internal/openapi"
	"github.com/narrator/narrator/internal/openapitest"
)

// TestDocumentLoads loads and validates the document with kin-openapi as
// OpenAPI 3.1, and checks that every operation has an id and answers its
// errors in the one error shape.
func TestDocumentLoads(t *testing.T) {
	t.Parallel()
	v := openapitest.MustLoad(t)
	doc := v.Doc()
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s %s: operationId %q missing or repeated", method, path, op.OperationID)
			}
			ids[op.OperationID] = true
			if strings.HasPrefix(path, "/api/") && op.Responses.Default() == nil {
				t.Errorf("%s %s has no default (error) answer", method, path)
			}
		}
	}
	for _, want := range []string{"listProjects", "createAudio", "listAudios", "getAudio", "updateAudio", "deleteAudio",
		"getProgress", "getTranscript", "listVoices", "listPronunciations", "setPronunciation", "removePronunciation",
		"listWebhooks", "createWebhook", "getWebhook", "deleteWebhook", "rotateWebhookSecret", "enableWebhook",
		"testWebhook", "listDeliveries", "resendDelivery", "getOpenAPI", "importAudio"} {
		if !ids[want] {
			t.Errorf("operation %s is missing", want)
		}
	}
}

// TestMismatchIsCaught shows that the document is strict enough to fail:
// answers that differ from the contract in small ways are refused.
func TestMismatchIsCaught(t *testing.T) {
	t.Parallel()
	v := openapitest.MustLoad(t)
	const good = `{"id": 1, "external_id": null, "state": "processed", "deleted": false, "metadata": {},
		"media": [{"id": 1, "content_type": "mp3", "url": "https://n.test/media/t/audio.mp3"}]}`
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"conforming audio", 200, good, true},
		{"unknown field", 200, strings.Replace(good, `"deleted"`, `"colour": "red", "deleted"`, 1), false},
		{"missing metadata", 200, strings.Replace(good, `"metadata": {},`, ``, 1), false},
		{"id as a string", 200, strings.Replace(good, `"id": 1, "external_id"`, `"id": "1", "external_id"`, 1), false},
		{"unknown state", 200, strings.Replace(good, `"processed"`, `"done"`, 1), false},
		{"url a non-empty array", 200, strings.Replace(good, `"https://n.test/media/t/audio.mp3"`, `["x"]`, 1), false},
		{"metadata value a number", 200, strings.Replace(good, `"metadata": {}`, `"metadata": {"n": 1}`, 1), false},
		{"error body", 404, `{"code": 30, "message": "Object not found"}`, true},
		{"a new error code", 429, `{"code": 60, "message": "Too many requests"}`, true},
		{"error without code", 404, `{"message": "Object not found"}`, false},
		{"error as text", 401, `{"error": "unauthorized"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest("GET", "/api/v3/projects/1/audio/a-1?api_key=k", nil)
			h := http.Header{"Content-Type": {"application/json"}}
			err := v.Check(t.Context(), req, nil, tt.status, h, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("Check = %v, want ok %v", err, tt.ok)
			}
		})
	}
	t.Run("webhook message", func(t *testing.T) {
		t.Parallel()
		event := `{"id": 1, "external_id": "e", "state": "processed", "deleted": false, "metadata": {},
			"media": [{"id": 1, "content_type": "mp3", "url": "https://n.test/a.mp3", "duration": 1.5}],
			"action_type": "audio.processed", "project_id": 1, "created_at": "2026-11-23T15:21:04.512093Z"}`
		if err := v.CheckSchema("AudioEvent", []byte(event)); err != nil {
			t.Errorf("conforming message: %v", err)
		}
		if err := v.CheckSchema("AudioEvent", []byte(strings.Replace(event, `"action_type": "audio.processed", `, ``, 1))); err == nil {
			t.Error("a message without action_type passed")
		}
		if err := v.CheckSchema("AudioEvent", []byte(strings.Replace(event, `, "duration": 1.5`, ``, 1))); err == nil {
			t.Error("a message whose media lack their duration passed")
		}
	})
	t.Run("undocumented API route", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest("GET", "/api/v3/colours", nil)
		if err := v.Check(t.Context(), req, nil, 200, http.Header{"Content-Type": {"application/json"}}, []byte(`[]`)); err == nil {
			t.Error("an answered route outside the document passed")
		}
	})
	t.Run("create without body field", func(t *testing.T) {
		t.Parallel()
		body := []byte(`{"title": "no body"}`)
		req := httptest.NewRequest("POST", "/api/v3/projects/1/audio", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := v.Check(t.Context(), req, body, 200, http.Header{"Content-Type": {"application/json"}}, []byte(good)); err == nil {
			t.Error("an accepted create without body passed")
		}
	})
}

// TestCheckRoutesAbsoluteURLs checks requests as a client's transport sees
// them, with the server's origin in the URL: the document's one server is
// "/", wherever it is served, so they are routed by their path alone and
// their answers are checked.
func TestCheckRoutesAbsoluteURLs(t *testing.T) {
	t.Parallel()
	v := openapitest.MustLoad(t)
	h := http.Header{"Content-Type": {"application/json"}}
	for _, origin := range []string{"http://127.0.0.1:8080", "https://audio.example.com"} {
		req := httptest.NewRequest("GET", origin+"/api/v3/projects?api_key=k", nil)
		if err := v.Check(t.Context(), req, nil, 200, h, []byte(`[]`)); err != nil {
			t.Errorf("%s: a conforming answer: %v", origin, err)
		}
		if err := v.Check(t.Context(), req, nil, 200, h, []byte(`{}`)); err == nil {
			t.Errorf("%s: an object where the projects' array belongs passed", origin)
		}
	}
}

// TestHandler serves the document as cacheable JSON.
func TestHandler(t *testing.T) {
	t.Parallel()
	h := openapi.NewHandler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v3/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Header().Get("Cache-Control"), "max-age") {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("body is not the document: %v", err)
	}
	if !bytes.Equal(rec.Body.Bytes(), openapi.Document()) {
		t.Error("served body differs from Document()")
	}
	req := httptest.NewRequest("GET", "/api/v3/openapi.json", nil)
	req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("revalidation answered %d, want 304", rec.Code)
	}
}

// TestDocumentMatchesOASSchema validates the document against the OpenAPI
// Initiative's own JSON Schema of OpenAPI 3.1 documents, independently of
// kin-openapi's loader, and shows that a broken document fails it.
func TestDocumentMatchesOASSchema(t *testing.T) {
	t.Parallel()
	const id = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
	raw, err := os.ReadFile(filepath.Join("testdata", "oas-3.1-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, meta); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("the document is not a valid OpenAPI 3.1 document: %v", err)
	}
	broken := doc.(map[string]any)
	delete(broken, "info")
	broken["paths"].(map[string]any)["/healthz"].(map[string]any)["get"].(map[string]any)["responses"] = map[string]any{"200": map[string]any{}}
	if err := schema.Validate(broken); err == nil {
		t.Error("a document without info, with a response without description, passed")
	}
}
