//go:build e2e

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestServeLimits: the limit flags reach the API. An account's third
// waiting audio is refused with 429 (code 60), an article over
// --max-audio-duration with 400, and another account is not held back.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	data, acct, proj := fixture(t)
	other := mustJSON[accountOut](t, mustCLI(t, "accounts", "create", "--data", data, "--name", "Other"))
	otherProj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(other.ID), "--title", "O", "--language", "en_US"))
	// An api node works no jobs: every create stays queued.
	s := startServer(t, data, freeAddr(t), "--role", "api", "--max-queued-per-account", "2", "--max-audio-duration", "1m")
	create := func(projectID int64, key, body string) (int, string) {
		status, raw := s.call(t, "POST", fmt.Sprintf("/api/v3/projects/%d/audio", projectID), map[string]any{"api_key": key, "body": body})
		return status, string(raw)
	}
	for i := range 2 {
		if status, raw := create(proj.ID, acct.APIKey, fmt.Sprintf("Article %d.", i)); status != 200 {
			t.Fatalf("create %d: %d %s", i, status, raw)
		}
	}
	if status, raw := create(proj.ID, acct.APIKey, "One too many."); status != 429 || !strings.Contains(raw, `"code":60`) {
		t.Errorf("third create: %d %s, want 429 with code 60", status, raw)
	}
	long := strings.Repeat("A sentence that takes a while to read. ", 60)
	if status, raw := create(otherProj.ID, other.APIKey, long); status != 400 || !strings.Contains(raw, "at most 1 min") {
		t.Errorf("long article: %d %s, want 400 naming the cap", status, raw)
	}
	if status, raw := create(otherProj.ID, other.APIKey, "Short."); status != 200 {
		t.Errorf("other account: %d %s", status, raw)
	}
}
