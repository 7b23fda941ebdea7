package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// TestResynthesizeProject: POST …/resynthesize queues one job for every
// audio of the project and answers 202; a second one, or a pronunciation
// change's, while it waits is a 409; another account's project is a 404.
func TestResynthesizeProject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create(t, map[string]any{"body": "One.", "external_id": "one"})
	b.create(t, map[string]any{"body": "Two.", "external_id": "two"})
	path := func(id int64) string { return fmt.Sprintf("/api/v3/projects/%d/resynthesize", id) }
	auth := []string{"Authorization", "Bearer " + b.key}

	r := b.do(t, "POST", path(b.project.ID), nil, auth...)
	if want := fmt.Sprintf(`{"project_id":%d,"resynthesis":"queued","audio_count":2}`, b.project.ID); r.status != http.StatusAccepted || string(r.body) != want+"\n" {
		t.Errorf("resynthesize: %d %s, want 202 %s", r.status, r.body, want)
	}
	if queued := sqlitetest.QueuedResyntheses(t, b.store.DB()); len(queued) != 1 || queued[0] != (narrator.ResynthesisJob{ProjectID: b.project.ID, All: true}) {
		t.Errorf("queued resyntheses %+v, want one of every audio of project %d", queued, b.project.ID)
	}

	// One resynthesis per project at a time, of either kind: the first
	// is still queued (this server works no jobs).
	wantError(t, b.do(t, "POST", path(b.project.ID), nil, auth...), 409, 40, "already under way")
	rules := fmt.Sprintf("/api/v3/projects/%d/pronunciations", b.project.ID)
	wantError(t, b.do(t, "POST", rules, map[string]any{"phrase": "one", "say": "won", "resynthesize": true}, auth...), 409, 40, "already under way")

	// Another project of the account has its own; the key may come in
	// the body too.
	second := b.newProject(t, b.account)
	r = b.do(t, "POST", path(second.ID), map[string]any{"api_key": b.key})
	if r.status != http.StatusAccepted || r.object(t)["audio_count"] != 0.0 {
		t.Errorf("resynthesize an empty project: %d %s, want 202 with audio_count 0", r.status, r.body)
	}
	otherAccount, otherKey := b.newAccount(t, "Other")
	wantError(t, b.do(t, "POST", path(b.newProject(t, otherAccount).ID), nil, auth...), 404, 30, "Object not found")
	wantError(t, b.do(t, "POST", path(b.project.ID), nil, "Authorization", "Bearer "+otherKey), 404, 30, "Object not found")
	wantError(t, b.do(t, "POST", path(9999), nil, auth...), 404, 30, "Object not found")
	if r := b.do(t, "POST", path(b.project.ID), nil); r.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d, want 401", r.status)
	}
}
