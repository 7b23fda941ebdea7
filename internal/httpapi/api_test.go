package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/extract"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/openapitest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/source"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// testBundle is a real API server on a real SQLite store with River's
// queue (not started: jobs are inserted and left alone).
type testBundle struct {
	// api is the server that srv serves.
	api     *httpapi.Server
	store   *sqlite.Store
	media   *localfs.Store
	srv     *httptest.Server
	account int64
	key     string
	project *narrator.Project
	// contract checks exchanges against the OpenAPI document.
	contract *openapitest.Validator
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	return setupLimits(t, narrator.Limits{})
}

// setupLimits is setup with a store that keeps accounts to limits.
func setupLimits(t testing.TB, limits narrator.Limits) *testBundle {
	t.Helper()
	mediaURL := func(key string) string { return "https://media.test/media/" + key }
	st, queue := sqlitetest.Open(t, sqlite.Options{EventBody: httpapi.EventBody(mediaURL), Limits: limits}, jobs.Config{})
	media, err := localfs.New(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.NewServer(httpapi.Deps{
		Store:       st,
		MediaURL:    mediaURL,
		Media:       media,
		Queue:       queue,
		Resynthesis: queue,
		// Pages come from loopback servers in these tests.
		Pages: extract.NewReader(fetch.New(fetch.Options{AllowPrivate: true})),
		// So do feeds.
		Sources:   source.New(st, source.Options{Client: fetch.New(fetch.Options{AllowPrivate: true})}),
		Clips:     pipeline.ClipDecoder{},
		FeedURL:   func(token string) string { return "https://audio.test" + narrator.FeedPath(token) },
		WebSubHub: testHub,
		Artwork:   smallArtwork{},
	})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	b := &testBundle{api: api, store: st, media: media, srv: srv, contract: openapitest.MustLoad(t)}
	b.account, b.key = b.newAccount(t, "Acme")
	b.project = b.newProject(t, b.account)
	return b
}

func (b *testBundle) newAccount(t testing.TB, name string) (int64, string) {
	t.Helper()
	a := &narrator.Account{Name: name}
	if err := b.store.CreateAccount(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	secret, prefix, hash, err := narrator.NewAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.CreateAPIKey(t.Context(), a.ID, hash, prefix); err != nil {
		t.Fatal(err)
	}
	return a.ID, secret
}

// revokeOnlyKey revokes the one API key of account, failing t unless it has one.
func (b *testBundle) revokeOnlyKey(t testing.TB, account int64) {
	t.Helper()
	keys, err := b.store.ListAPIKeys(t.Context(), account)
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	if err := b.store.RevokeAPIKey(t.Context(), account, keys[0].ID); err != nil {
		t.Fatal(err)
	}
}

func (b *testBundle) newProject(t testing.TB, account int64) *narrator.Project {
	t.Helper()
	title, body, _ := narrator.DefaultVoices("en_US")
	p := &narrator.Project{AccountID: account, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: title.Name, BodyVoice: body.Name}
	if err := b.store.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

func (r response) array(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("body %q is not a JSON array: %v", r.body, err)
	}
	return a
}

func (b *testBundle) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	ctype := "application/json"
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case url.Values:
		rd = strings.NewReader(v.Encode())
		ctype = "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// Every exchange of the handler tests is checked against the OpenAPI
	// document.
	res, err := (&http.Client{Transport: b.contract.Transport(t, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return response{status: res.StatusCode, header: res.Header, body: raw}
}

func (b *testBundle) audioPath(ref any) string {
	return fmt.Sprintf("/api/v3/projects/%d/audio/%v", b.project.ID, ref)
}

func (b *testBundle) audiosPath() string {
	return fmt.Sprintf("/api/v3/projects/%d/audio", b.project.ID)
}

// create posts an article and returns the audio.
func (b *testBundle) create(t *testing.T, fields map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"api_key": b.key}
	for k, v := range fields {
		body[k] = v
	}
	r := b.do(t, "POST", b.audiosPath(), body)
	if r.status != 200 {
		t.Fatalf("create: status %d, body %s", r.status, r.body)
	}
	return r.object(t)
}

func wantError(t *testing.T, r response, status, code int, msgPart string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	m := r.object(t)
	if int(m["code"].(float64)) != code {
		t.Errorf("code %v, want %d", m["code"], code)
	}
	msg, _ := m["message"].(string)
	if !strings.Contains(msg, msgPart) {
		t.Errorf("message %q does not contain %q", msg, msgPart)
	}
}

func TestCreateAudio(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"title": "T", "body": "<p>Hello</p>", "author": "Ann", "article_url": "https://x.test/a", "external_id": "art-1", "metadata": map[string]string{"k": "v"}})
	if a["state"] != "unprocessed" || a["deleted"] != false || a["external_id"] != "art-1" {
		t.Errorf("audio %v", a)
	}
	if got := a["metadata"].(map[string]any)["k"]; got != "v" {
		t.Errorf("metadata %v", a["metadata"])
	}
	media := a["media"].([]any)
	if len(media) != 2 {
		t.Fatalf("media %v", media)
	}
	for i, want := range []string{"mp3", "m3u8"} {
		m := media[i].(map[string]any)
		if m["content_type"] != want {
			t.Errorf("media[%d] = %v, want %s first", i, m, want)
		}
		if u, ok := m["url"].([]any); !ok || len(u) != 0 {
			t.Errorf("media[%d].url = %v, want []", i, m["url"])
		}
	}
	for _, f := range []string{"title", "body", "author", "article_url"} {
		if _, ok := a[f]; ok {
			t.Errorf("input-only field %s returned", f)
		}
	}
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"missing body", map[string]any{"api_key": b.key, "title": "x"}, 400, "body"},
		{"blank body", map[string]any{"api_key": b.key, "body": "  \n\t "}, 400, "body"},
		{"body not a string", map[string]any{"api_key": b.key, "body": 12}, 400, "body"},
		{"body too long", map[string]any{"api_key": b.key, "body": strings.Repeat("é", narrator.MaxBodyChars+1)}, 400, "body"},
		{"metadata not an object", map[string]any{"api_key": b.key, "body": "x", "metadata": []string{"a"}}, 400, "metadata"},
		{"metadata value not a string", map[string]any{"api_key": b.key, "body": "x", "metadata": map[string]any{"a": 1}}, 400, "metadata"},
		{"bad article_url", map[string]any{"api_key": b.key, "body": "x", "article_url": "not a url"}, 400, "article_url"},
		{"title not a string", map[string]any{"api_key": b.key, "body": "x", "title": map[string]any{}}, 400, "title"},
		{"invalid JSON", `{"api_key": "` + b.key + `", "body": `, 400, "JSON"},
		{"JSON array", `[1,2]`, 400, "JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := b.do(t, "POST", b.audiosPath(), c.body, "X-Api-Key", b.key)
			wantError(t, r, c.status, 10, c.msg)
		})
	}
	t.Run("body of 100,000 characters is fine", func(t *testing.T) {
		t.Parallel()
		b.create(t, map[string]any{"body": strings.Repeat("é", narrator.MaxBodyChars)})
	})
	t.Run("oversized request refused", func(t *testing.T) {
		t.Parallel()
		big := map[string]any{"api_key": b.key, "body": strings.Repeat("a", httpapi.DefaultMaxBodyBytes+1)}
		wantError(t, b.do(t, "POST", b.audiosPath(), big, "X-Api-Key", b.key), 413, 10, "larger than")
		// A key inside a body too large to read is not found.
		wantError(t, b.do(t, "POST", b.audiosPath(), big), 401, 20, "")
	})
}

func TestAPIKeyPlaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"body": "x", "external_id": "e1"})
	id := int64(a["id"].(float64))
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []string
	}{
		{"query", "GET", b.audioPath(id) + "?api_key=" + b.key, nil, nil},
		{"JSON body on GET", "GET", b.audioPath(id), map[string]any{"api_key": b.key}, nil},
		{"bearer", "GET", b.audioPath(id), nil, []string{"Authorization", "Bearer " + b.key}},
		{"bearer in lower case", "GET", b.audioPath(id), nil, []string{"Authorization", "bearer " + b.key}},
		{"X-Api-Key", "GET", b.audioPath(id), nil, []string{"X-Api-Key", b.key}},
		{"form", "PUT", b.audioPath(id), url.Values{"api_key": {b.key}}, nil},
		{"list in query", "GET", b.audiosPath() + "?api_key=" + b.key, nil, nil},
		{"projects in query", "GET", "/api/v3/projects?api_key=" + b.key, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if r := b.do(t, c.method, c.path, c.body, c.headers...); r.status != 200 {
				t.Fatalf("status %d body %s", r.status, r.body)
			}
		})
	}
	unauthorized := []struct {
		name    string
		path    string
		headers []string
	}{
		{"no key", b.audiosPath(), nil},
		{"wrong key", b.audiosPath() + "?api_key=nk_nope", nil},
		{"wrong bearer", b.audiosPath(), []string{"Authorization", "Bearer nk_nope"}},
		{"no key on projects", "/api/v3/projects", nil},
		{"no key on missing project", "/api/v3/projects/999/audio", nil},
	}
	for _, c := range unauthorized {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := b.do(t, "GET", c.path, nil, c.headers...)
			wantError(t, r, 401, 20, "The authentication token was not recognised")
		})
	}
}

func TestRevokedKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.revokeOnlyKey(t, b.account)
	wantError(t, b.do(t, "GET", "/api/v3/projects?api_key="+b.key, nil), 401, 20, "recognised")
}

// TestRevokedKeyCreates revokes keys that have created before on this
// server, which then no longer reads them before a create (knownKeys):
// the store must, or, for a create that fails for another reason, the
// handler, so that a create with a revoked key answers 401 and stores
// nothing.
func TestRevokedKeyCreates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	otherAccount, otherKey := b.newAccount(t, "Other")
	theirs := b.newProject(t, otherAccount)
	theirPath := fmt.Sprintf("/api/v3/projects/%d/audio", theirs.ID)
	b.create(t, map[string]any{"body": "Before.", "external_id": "before"})
	if r := b.do(t, "POST", theirPath, map[string]any{"api_key": otherKey, "body": "Before."}); r.status != 200 {
		t.Fatalf("create: status %d, body %s", r.status, r.body)
	}
	// The keys are known now, each with its project only: another
	// account's project is still not found.
	r := b.do(t, "POST", theirPath, map[string]any{"api_key": b.key, "body": "x"})
	wantError(t, r, 404, 30, "Object not found")
	for _, account := range []int64{b.account, otherAccount} {
		b.revokeOnlyKey(t, account)
	}
	for range 2 {
		r := b.do(t, "POST", b.audiosPath(), map[string]any{"api_key": b.key, "body": "After.", "external_id": "after"})
		wantError(t, r, 401, 20, "recognised")
	}
	_, err := b.store.FindAudio(t.Context(), b.project.ID, "after")
	if narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Fatalf("the refused create was stored: %v", err)
	}
	// No body: 401 still comes first.
	r = b.do(t, "POST", theirPath, map[string]any{"api_key": otherKey, "title": "No body"})
	wantError(t, r, 401, 20, "recognised")

	// A third key, known, then revoked, in a header, with a body that is
	// not JSON: 401 before the body's 400.
	third, thirdKey := b.newAccount(t, "Third")
	q := b.newProject(t, third)
	qPath := fmt.Sprintf("/api/v3/projects/%d/audio", q.ID)
	if r := b.do(t, "POST", qPath, map[string]any{"body": "Before."}, "X-Api-Key", thirdKey); r.status != 200 {
		t.Fatalf("create: status %d, body %s", r.status, r.body)
	}
	b.revokeOnlyKey(t, third)
	r = b.do(t, "POST", qPath, "{not json", "X-Api-Key", thirdKey)
	wantError(t, r, 401, 20, "recognised")
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	otherAccount, otherKey := b.newAccount(t, "Other")
	otherProject := b.newProject(t, otherAccount)
	mine := b.create(t, map[string]any{"body": "x"})
	id := int64(mine["id"].(float64))
	// An audio of another project of the same account.
	second := b.newProject(t, b.account)
	cases := []struct {
		name, method, path string
	}{
		{"missing project", "GET", "/api/v3/projects/9999/audio"},
		{"project id not a number", "GET", "/api/v3/projects/abc/audio"},
		{"project of another account", "GET", fmt.Sprintf("/api/v3/projects/%d/audio", otherProject.ID)},
		{"post to another account's project", "POST", fmt.Sprintf("/api/v3/projects/%d/audio", otherProject.ID)},
		{"missing audio", "GET", b.audioPath(99999)},
		{"missing external id", "GET", b.audioPath("nope")},
		{"audio of another project", "GET", fmt.Sprintf("/api/v3/projects/%d/audio/%d", second.ID, id)},
		{"update missing", "PUT", b.audioPath(99999)},
		{"delete missing", "DELETE", b.audioPath(99999)},
		{"unknown route", "GET", "/api/v3/nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := b.do(t, c.method, c.path, map[string]any{"api_key": b.key, "body": "x"})
			wantError(t, r, 404, 30, "Object not found")
		})
	}
	t.Run("other account cannot see mine", func(t *testing.T) {
		t.Parallel()
		wantError(t, b.do(t, "GET", b.audioPath(id)+"?api_key="+otherKey, nil), 404, 30, "Object not found")
	})
}

func TestExternalIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.create(t, map[string]any{"body": "one", "external_id": "ext-7", "metadata": map[string]string{"v": "1"}})
	again := b.create(t, map[string]any{"body": "one", "external_id": "ext-7", "metadata": map[string]string{"v": "2"}})
	if again["id"] != first["id"] {
		t.Fatalf("a repeated external_id made a new audio: %v then %v", first["id"], again["id"])
	}
	if again["metadata"].(map[string]any)["v"] != "2" {
		t.Errorf("repeat did not update: %v", again)
	}
	list := b.do(t, "GET", b.audiosPath()+"?api_key="+b.key, nil).array(t)
	if len(list) != 1 {
		t.Fatalf("list has %d audios, want 1", len(list))
	}
	got := b.do(t, "GET", b.audioPath("ext-7")+"?api_key="+b.key, nil).object(t)
	if got["id"] != first["id"] {
		t.Errorf("get by external id: %v", got)
	}
	// A numeric external_id that is also another audio's id: the id wins.
	numeric := b.create(t, map[string]any{"body": "two", "external_id": fmt.Sprint(int64(first["id"].(float64)))})
	if got := b.do(t, "GET", b.audioPath(int64(first["id"].(float64)))+"?api_key="+b.key, nil).object(t); got["id"] != first["id"] {
		t.Errorf("numeric ref resolved to %v, want the audio with that id", got["id"])
	}
	_ = numeric
	// Changing an external_id to one in use is refused.
	r := b.do(t, "PUT", b.audioPath("ext-7"), map[string]any{"api_key": b.key, "external_id": numeric["external_id"]})
	wantError(t, r, 400, 10, "external_id")
}

func TestUpdateAudio(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"title": "T", "body": "B", "external_id": "u1", "metadata": map[string]string{"a": "1"}})
	id := int64(a["id"].(float64))
	stored, err := b.store.FindAudio(t.Context(), b.project.ID, "u1")
	if err != nil {
		t.Fatal(err)
	}
	finish := func(t *testing.T, rev int) {
		t.Helper()
		keys := map[string]string{"mp3": fmt.Sprintf("tok%d/audio.mp3", rev), "m3u8": fmt.Sprintf("tok%d/audio.m3u8", rev)}
		if err := b.store.FinishAudio(t.Context(), id, rev, narrator.Rendering{Keys: keys, Bytes: map[string]int64{"mp3": 1000, "m3u8": 100}, Duration: 1234 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	finish(t, stored.Revision)

	got := b.do(t, "PUT", b.audioPath(id), map[string]any{"api_key": b.key}).object(t)
	if got["state"] != "processed" || got["metadata"].(map[string]any)["a"] != "1" {
		t.Fatalf("empty update changed the audio: %v", got)
	}
	media := got["media"].([]any)
	if u := media[0].(map[string]any)["url"]; u != "https://media.test/media/tok1/audio.mp3" {
		t.Errorf("mp3 url %v", u)
	}

	got = b.do(t, "PUT", b.audioPath(id), map[string]any{"api_key": b.key, "metadata": map[string]string{"b": "2"}}).object(t)
	if got["state"] != "processed" {
		t.Errorf("metadata change resynthesised: %v", got)
	}
	got = b.do(t, "PUT", b.audioPath("u1"), map[string]any{"api_key": b.key, "external_id": "u2"}).object(t)
	if got["state"] != "processed" || got["external_id"] != "u2" {
		t.Errorf("external_id change: %v", got)
	}
	got = b.do(t, "PUT", b.audioPath("u2"), map[string]any{"api_key": b.key, "title": "New title"}).object(t)
	if got["state"] != "unprocessed" {
		t.Errorf("title change did not resynthesise: %v", got)
	}
	if u, ok := got["media"].([]any)[0].(map[string]any)["url"].([]any); !ok || len(u) != 0 {
		t.Errorf("unprocessed audio shows a url: %v", got["media"])
	}
	after, err := b.store.FindAudio(t.Context(), b.project.ID, "u2")
	if err != nil {
		t.Fatal(err)
	}
	if after.Body != "B" || after.Title != "New title" || after.Metadata["b"] != "2" {
		t.Errorf("omitted fields not kept: %+v", after)
	}
	wantError(t, b.do(t, "PUT", b.audioPath(id), map[string]any{"api_key": b.key, "body": " "}), 400, 10, "body")
}

func TestDeleteAudio(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"body": "x", "external_id": "d1"})
	id := int64(a["id"].(float64))
	r := b.do(t, "DELETE", b.audioPath(id), map[string]any{"api_key": b.key})
	if r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	got := r.object(t)
	if got["deleted"] != true || got["media"].([]any)[0].(map[string]any)["content_type"] != "mp3" {
		t.Errorf("delete response %v", got)
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		wantError(t, b.do(t, m, b.audioPath(id), map[string]any{"api_key": b.key}), 404, 30, "Object not found")
	}
	if list := b.do(t, "GET", b.audiosPath()+"?api_key="+b.key, nil).array(t); len(list) != 0 {
		t.Errorf("deleted audio listed: %v", list)
	}
	projects := b.do(t, "GET", "/api/v3/projects?api_key="+b.key, nil).array(t)
	if projects[0]["audio_count"] != 0.0 {
		t.Errorf("audio_count %v after delete", projects[0]["audio_count"])
	}
	// The external id is free again.
	again := b.create(t, map[string]any{"body": "y", "external_id": "d1"})
	if again["id"] == a["id"] {
		t.Error("create after delete revived the deleted audio")
	}
}

func TestListAudios(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var ids []float64
	for i := range 53 {
		ids = append(ids, b.create(t, map[string]any{"body": fmt.Sprint("article ", i)})["id"].(float64))
	}
	page1 := b.do(t, "GET", b.audiosPath()+"?api_key="+b.key, nil).array(t)
	page2 := b.do(t, "GET", b.audiosPath()+"?page=2&api_key="+b.key, nil).array(t)
	page3 := b.do(t, "GET", b.audiosPath()+"?page=3&api_key="+b.key, nil)
	if len(page1) != 50 || len(page2) != 3 || string(bytes.TrimSpace(page3.body)) != "[]" {
		t.Fatalf("pages of %d, %d, %s", len(page1), len(page2), page3.body)
	}
	if page1[0]["id"] != ids[52] || page2[2]["id"] != ids[0] {
		t.Errorf("not newest first: first %v last %v", page1[0]["id"], page2[2]["id"])
	}
	media := page1[0]["media"].([]any)
	if media[0].(map[string]any)["content_type"] != "m3u8" || media[1].(map[string]any)["content_type"] != "mp3" {
		t.Errorf("list media order %v, want m3u8 then mp3", media)
	}
	for _, p := range []string{"daily", "weekly", "monthly", "all"} {
		if got := b.do(t, "GET", b.audiosPath()+"?period="+p+"&api_key="+b.key, nil).array(t); len(got) != 50 {
			t.Errorf("period %s: %d audios", p, len(got))
		}
	}
	for _, q := range []string{"period=yearly", "page=0", "page=abc", "page=-1"} {
		wantError(t, b.do(t, "GET", b.audiosPath()+"?"+q+"&api_key="+b.key, nil), 400, 10, strings.Split(q, "=")[0])
	}
}

func TestListProjects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create(t, map[string]any{"body": "x"})
	other, _ := b.newAccount(t, "Other")
	b.newProject(t, other)
	got := b.do(t, "GET", "/api/v3/projects?api_key="+b.key, nil).array(t)
	if len(got) != 1 {
		t.Fatalf("projects %v", got)
	}
	p := got[0]
	title, body, _ := narrator.DefaultVoices("en_US")
	want := map[string]any{"id": float64(b.project.ID), "title": "News", "type": "api", "language": "en_US", "url": nil, "title_voice": title.Label(), "body_voice": body.Label(), "audio_count": 1.0}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %v, want %v", k, p[k], v)
		}
	}
}

// TestListProjectsRemovedVoice checks that a project whose voice the operator removed shows
// the voice that speaks for it now, its language's default for the role, not the bare name of
// a voice that is gone.
func TestListProjectsRemovedVoice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, key := b.newAccount(t, "Removed")
	p := &narrator.Project{AccountID: acct, Title: "Gone", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Tone", BodyVoice: "Tone"}
	if err := b.store.CreateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	got := b.do(t, "GET", "/api/v3/projects?api_key="+key, nil).array(t)
	if len(got) != 1 {
		t.Fatalf("projects %v", got)
	}
	title, body, _ := narrator.DefaultVoices("en_US")
	if got[0]["title_voice"] != title.Label() || got[0]["body_voice"] != body.Label() {
		t.Errorf("title_voice %v, body_voice %v; want %s and %s, the voices that speak now", got[0]["title_voice"], got[0]["body_voice"], title.Label(), body.Label())
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "PATCH", b.audiosPath(), map[string]any{"api_key": b.key})
	if r.status != 405 {
		t.Fatalf("status %d", r.status)
	}
}

func TestFormBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "POST", b.audiosPath(), url.Values{"api_key": {b.key}, "body": {"Form body"}, "external_id": {"f1"}, "metadata[src]": {"form"}})
	if r.status != 200 {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	a := r.object(t)
	if a["external_id"] != "f1" || a["metadata"].(map[string]any)["src"] != "form" {
		t.Errorf("form create: %v", a)
	}
	// curl -d '{...}' without a Content-Type header labels JSON as a form.
	r = b.do(t, "POST", b.audiosPath(), `{"api_key": "`+b.key+`", "body": "JSON labelled as a form"}`, "Content-Type", "application/x-www-form-urlencoded")
	if r.status != 200 {
		t.Errorf("JSON labelled as a form: %d %s", r.status, r.body)
	}
}

func TestFailedAudioShowsError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, map[string]any{"body": "x", "external_id": "bad"})
	st, err := b.store.FindAudio(t.Context(), b.project.ID, "bad")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.FailAudio(context.Background(), int64(a["id"].(float64)), st.Revision, "the engine gave up"); err != nil {
		t.Fatal(err)
	}
	got := b.do(t, "GET", b.audioPath("bad")+"?api_key="+b.key, nil).object(t)
	if got["state"] != "failed" || got["error"] != "the engine gave up" {
		t.Errorf("failed audio: %v", got)
	}
	_ = time.Now
}

func TestPronunciations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create(t, map[string]any{"body": "We run nginx in production.", "external_id": "with"})
	b.create(t, map[string]any{"body": "Nothing to see.", "external_id": "without"})
	path := fmt.Sprintf("/api/v3/projects/%d/pronunciations", b.project.ID)

	r := b.do(t, "POST", path, map[string]any{"api_key": b.key, "phrase": "nginx", "say": "engine x"})
	if r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	rule := r.object(t)
	if rule["phrase"] != "nginx" || rule["say"] != "engine x" || rule["resynthesis"] != nil {
		t.Errorf("rule %v", rule)
	}
	list := b.do(t, "GET", path+"?api_key="+b.key, nil).array(t)
	if len(list) != 1 || list[0]["id"] != rule["id"] {
		t.Errorf("list %v", list)
	}
	r = b.do(t, "POST", path, map[string]any{"api_key": b.key, "phrase": "NGINX", "say": "engine ex", "resynthesize": true})
	again := r.object(t)
	if again["id"] != rule["id"] || again["resynthesis"] != "queued" {
		t.Errorf("replace with resynthesis: %v", again)
	}
	// One resynthesis per project at a time: the first is still queued
	// (this server works no jobs).
	wantError(t, b.do(t, "POST", path, map[string]any{"api_key": b.key, "phrase": "nginx", "say": "engine x", "resynthesize": true}),
		409, 40, "already under way")
	wantError(t, b.do(t, "POST", path, map[string]any{"api_key": b.key, "phrase": "x"}), 400, 10, "say")
	wantError(t, b.do(t, "POST", path, map[string]any{"api_key": b.key, "phrase": "x", "say": "y", "resynthesize": "maybe"}), 400, 10, "resynthesize")
	r = b.do(t, "DELETE", fmt.Sprintf("%s/%v", path, rule["id"]), map[string]any{"api_key": b.key})
	if r.status != 200 {
		t.Fatalf("remove: %d %s", r.status, r.body)
	}
	wantError(t, b.do(t, "DELETE", fmt.Sprintf("%s/%v", path, rule["id"]), map[string]any{"api_key": b.key}), 404, 30, "Object not found")
	wantError(t, b.do(t, "GET", "/api/v3/projects/9999/pronunciations?api_key="+b.key, nil), 404, 30, "Object not found")
}

func TestVoices(t *testing.T) {
	t.Parallel()
	b := setup(t)
	all := b.do(t, "GET", "/api/v3/voices?api_key="+b.key, nil).array(t)
	if len(all) != len(narrator.Voices()) {
		t.Errorf("%d voices, catalog has %d", len(all), len(narrator.Voices()))
	}
	de := b.do(t, "GET", "/api/v3/voices?language=de_DE&api_key="+b.key, nil).array(t)
	if len(de) < 2 {
		t.Fatalf("de_DE voices %v", de)
	}
	for _, v := range de {
		if v["language"] != "de_DE" || !strings.HasSuffix(v["label"].(string), ")") {
			t.Errorf("voice %v", v)
		}
	}
	wantError(t, b.do(t, "GET", "/api/v3/voices?language=xx_XX&api_key="+b.key, nil), 400, 10, "language")
	wantError(t, b.do(t, "GET", "/api/v3/voices", nil), 401, 20, "recognised")
}

func TestPronunciationsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range narrator.MaxPronunciations {
		if err := b.store.SetPronunciation(t.Context(), &narrator.Pronunciation{ProjectID: b.project.ID, Phrase: fmt.Sprint("word", i), Say: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	path := fmt.Sprintf("/api/v3/projects/%d/pronunciations", b.project.ID)
	r := b.do(t, "POST", path, map[string]any{"phrase": "nginx", "say": "engine x"}, "X-Api-Key", b.key)
	wantError(t, r, http.StatusConflict, 40, "500 pronunciation rules, the most allowed")
	if r := b.do(t, "POST", path, map[string]any{"phrase": "Word7", "say": "y"}, "X-Api-Key", b.key); r.status != 200 {
		t.Errorf("replacing a rule at the limit: %d %s", r.status, r.body)
	}
}
