package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestWebhooksPage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	page := c.projectPage(b.project.ID, "webhooks")
	res := c.get(page)
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, "No webhooks yet") {
		t.Errorf("empty webhooks page:\n%s", res.body)
	}

	// Bad input gets the form back with a message, not a 500.
	for _, form := range []url.Values{
		{"url": {"ftp://x.example/"}},
		{"url": {""}},
		{"url": {"https://x.example/"}, "events": {"audio.created"}},
	} {
		form.Set("csrf_token", tok)
		res := c.post(page, form)
		wantStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(res.body, `class="alert"`) || !strings.Contains(res.body, `id="webhook-form"`) {
			t.Errorf("bad form %v: %s", form, res.body)
		}
	}

	// Add: POST, redirect, GET shows the secret once.
	res = c.post(page, url.Values{"csrf_token": {tok}, "url": {"https://hooks.example.com/in"}, "events": {"audio.processed", "audio.failed"}})
	wantStatus(t, res, http.StatusSeeOther)
	res = c.get(page)
	// html/template writes + as &#43; in attributes.
	m := regexp.MustCompile(`readonly value="(whsec_[A-Za-z0-9+/=]+)"`).FindStringSubmatch(html.UnescapeString(res.body))
	if m == nil {
		t.Fatalf("no secret on the page after adding:\n%s", res.body)
	}
	hooks, err := b.store.ListWebhooks(t.Context(), b.project.ID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("webhooks = %v, %v", hooks, err)
	}
	h := hooks[0]
	if h.Secret != m[1] || strings.Join(h.Events, ",") != "audio.processed,audio.failed" {
		t.Errorf("stored %+v; page showed secret %s", h, m[1])
	}
	if res := c.get(page); strings.Contains(html.UnescapeString(res.body), m[1]) {
		t.Error("the secret is shown a second time")
	}
	hookPath := fmt.Sprintf("%s/%d", page, h.ID)

	// Test, then resend the test delivery.
	wantStatus(t, c.post(hookPath+"/test", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	ds, err := b.store.ListDeliveries(t.Context(), b.project.ID, h.ID, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	if _, err := b.store.RecordAttempt(t.Context(), ds[0].ID, narrator.WebhookAttempt{At: time.Now(), ResponseCode: 503, Error: "the endpoint answered 503"}); err != nil {
		t.Fatal(err)
	}
	res = c.get(page)
	row := regexp.MustCompile(`(?s)<tr data-delivery-id="` + fmt.Sprint(ds[0].ID) + `".*?</tr>`).FindString(res.body)
	for _, want := range []string{"webhook.test", "pending", "503", ds[0].MessageID, "Resend"} {
		if !strings.Contains(row, want) {
			t.Errorf("delivery row lacks %q:\n%s", want, row)
		}
	}
	wantStatus(t, c.post(fmt.Sprintf("%s/deliveries/%d/resend", hookPath, ds[0].ID), url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	wantStatus(t, c.post(fmt.Sprintf("%s/deliveries/%d/resend", hookPath, 9999), url.Values{"csrf_token": {tok}}), http.StatusNotFound)

	// A day of failures disables the endpoint; the page says so and can
	// enable it again.
	if _, err := b.store.RecordAttempt(t.Context(), ds[0].ID, narrator.WebhookAttempt{At: time.Now().Add(25 * time.Hour), ResponseCode: 500, Error: "x"}); err != nil {
		t.Fatal(err)
	}
	res = c.get(page)
	if !strings.Contains(res.body, "disabled-notice") || !strings.Contains(res.body, "failed for a day") || !strings.Contains(res.body, hookPath+"/enable") {
		t.Errorf("disabled endpoint's section:\n%s", res.body)
	}
	wantStatus(t, c.post(hookPath+"/enable", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	if got, _ := b.store.FindWebhook(t.Context(), b.project.ID, h.ID); got.Disabled() {
		t.Error("still disabled after enable")
	}

	// Rotate shows the new secret once.
	wantStatus(t, c.post(hookPath+"/rotate", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	res = c.get(page)
	got, _ := b.store.FindWebhook(t.Context(), b.project.ID, h.ID)
	if got.Secret == h.Secret || !strings.Contains(html.UnescapeString(res.body), got.Secret) {
		t.Error("rotation did not show a new secret")
	}

	// Another account sees none of it; no CSRF token, no change.
	other := b.browser(t)
	b.newUser(t, "Other", "other@acme.test")
	otherTok := other.mustSignIn("other@acme.test")
	wantStatus(t, other.get(page), http.StatusNotFound)
	wantStatus(t, other.post(hookPath+"/delete", url.Values{"csrf_token": {otherTok}}), http.StatusNotFound)
	wantStatus(t, c.post(hookPath+"/delete", url.Values{}), http.StatusForbidden)
	wantStatus(t, c.post(page+"/abc/test", url.Values{"csrf_token": {tok}}), http.StatusNotFound)

	// Removing asks first.
	res = c.get(hookPath + "/delete")
	wantStatus(t, res, 200)
	if !strings.Contains(res.body, `id="remove-webhook-form"`) || !strings.Contains(res.body, h.URL) {
		t.Errorf("remove confirmation page:\n%s", res.body)
	}
	if _, err := b.store.FindWebhook(t.Context(), b.project.ID, h.ID); err != nil {
		t.Errorf("the confirmation page removed the webhook: %v", err)
	}
	wantStatus(t, c.post(hookPath+"/delete", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	if hooks, _ := b.store.ListWebhooks(t.Context(), b.project.ID); len(hooks) != 0 {
		t.Errorf("webhooks after remove: %v", hooks)
	}
}

// TestWebhookTestLimited: the dashboard's test button is limited per
// endpoint like the API's: past the burst, a 429 page with Retry-After,
// and no delivery queued.
func TestWebhookTestLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	c, tok := b.signedIn(t)
	page := fmt.Sprintf("/projects/%d/webhooks", b.project.ID)
	wantStatus(t, c.post(page, url.Values{"csrf_token": {tok}, "url": {"https://hooks.example.com/in"}}), http.StatusSeeOther)
	hooks, err := b.store.ListWebhooks(t.Context(), b.project.ID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("webhooks = %v, %v", hooks, err)
	}
	hookPath := fmt.Sprintf("%s/%d/test", page, hooks[0].ID)
	for i := range 3 * narrator.WebhookTriggerBurst {
		res := c.post(hookPath, url.Values{"csrf_token": {tok}})
		if res.StatusCode == http.StatusSeeOther {
			continue
		}
		if i < narrator.WebhookTriggerBurst {
			t.Fatalf("test %d of the burst refused: %d", i+1, res.StatusCode)
		}
		wantStatus(t, res, http.StatusTooManyRequests)
		if res.Header.Get("Retry-After") == "" || !strings.Contains(res.body, "Try again in") {
			t.Errorf("refusal: Retry-After %q\n%s", res.Header.Get("Retry-After"), res.body)
		}
		ds, err := b.store.ListDeliveries(t.Context(), b.project.ID, hooks[0].ID, 100)
		if err != nil || len(ds) != i {
			t.Errorf("deliveries after %d accepted tests: %d, %v", i, len(ds), err)
		}
		return
	}
	t.Fatalf("%d tests in a row all accepted", 3*narrator.WebhookTriggerBurst)
}
