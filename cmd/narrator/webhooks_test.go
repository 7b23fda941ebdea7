package main

import (
	"fmt"
	"strings"
	"testing"
)

// webhookOut is an endpoint as the CLI prints it.
type webhookOut struct {
	ID      int64    `json:"id"`
	URL     string   `json:"url"`
	Events  []string `json:"events"`
	Enabled bool     `json:"enabled"`
	Secret  string   `json:"secret"`
}

func TestWebhooksCLI(t *testing.T) {
	t.Parallel()
	data, _, proj := fixture(t)
	p := fmt.Sprint(proj.ID)
	h := mustJSON[webhookOut](t, mustCLI(t, "webhooks", "add", "--data", data, "--project", p, "--url", "https://hooks.example.com/x", "--events", "audio.failed, audio.processed"))
	if !strings.HasPrefix(h.Secret, "whsec_") || !h.Enabled || strings.Join(h.Events, ",") != "audio.processed,audio.failed" {
		t.Errorf("added %+v", h)
	}
	id := fmt.Sprint(h.ID)
	list := mustJSON[[]webhookOut](t, mustCLI(t, "webhooks", "list", "--data", data, "--project", p))
	if len(list) != 1 || list[0].Secret != "" || list[0].URL != h.URL {
		t.Errorf("list %+v; want the endpoint without its secret", list)
	}
	rotated := mustJSON[webhookOut](t, mustCLI(t, "webhooks", "rotate-secret", "--data", data, "--project", p, "--id", id))
	if rotated.Secret == h.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Errorf("rotated secret %q", rotated.Secret)
	}
	d := mustJSON[struct {
		Event     string `json:"event"`
		State     string `json:"state"`
		MessageID string `json:"message_id"`
	}](t, mustCLI(t, "webhooks", "test", "--data", data, "--project", p, "--id", id))
	if d.Event != "webhook.test" || d.State != "pending" || !strings.HasPrefix(d.MessageID, "msg_") {
		t.Errorf("test delivery %+v", d)
	}
	mustCLI(t, "webhooks", "enable", "--data", data, "--project", p, "--id", id)
	mustCLI(t, "webhooks", "remove", "--data", data, "--project", p, "--id", id)
	if list := mustJSON[[]webhookOut](t, mustCLI(t, "webhooks", "list", "--data", data, "--project", p)); len(list) != 0 {
		t.Errorf("after remove: %+v", list)
	}
	for _, args := range [][]string{
		{"webhooks"},
		{"webhooks", "nope", "--data", data},
		{"webhooks", "add", "--data", data, "--url", "https://x.example/"},
		{"webhooks", "add", "--data", data, "--project", p, "--url", "ftp://x.example/"},
		{"webhooks", "add", "--data", data, "--project", p, "--url", "https://x.example/", "--events", "audio.created"},
		{"webhooks", "add", "--data", data, "--project", "999", "--url", "https://x.example/"},
		{"webhooks", "remove", "--data", data, "--project", p},
		{"webhooks", "remove", "--data", data, "--project", p, "--id", id},
		{"webhooks", "test", "--data", data, "--project", p, "--id", "999"},
	} {
		if _, errOut, err := runCLI(t, args...); err == nil {
			t.Errorf("narrator %v succeeded", args)
		} else if err.Error() == "" && errOut == "" {
			t.Errorf("narrator %v failed without a message", args)
		}
	}
}
