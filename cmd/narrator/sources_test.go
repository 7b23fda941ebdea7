package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sourceOut is a source as the CLI prints it.
type sourceOut struct {
	ID        int64    `json:"id"`
	URL       string   `json:"url"`
	Headers   []string `json:"headers"`
	Status    string   `json:"status"`
	LastError string   `json:"last_error"`
	Created   int64    `json:"created"`
	ItemsSeen int64    `json:"items_seen"`
}

func TestSourcesCLI(t *testing.T) {
	t.Parallel()
	data, acct, api := fixture(t)
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/feed+json")
		fmt.Fprint(w, `{"version":"https://jsonfeed.org/version/1.1","title":"T","items":[
{"id":"1","url":"https://example.com/1","title":"One","content_text":"One."},
{"id":"2","url":"https://example.com/2","title":"Two","content_html":"<p>Two.</p>"}]}`)
	}))
	t.Cleanup(feed.Close)
	proj := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Feeds", "--language", "en_US", "--type", "rss"))
	if proj.Type != "rss" {
		t.Fatalf("project %+v; want type rss", proj)
	}
	p := fmt.Sprint(proj.ID)
	src := mustJSON[sourceOut](t, mustCLI(t, "sources", "add", "--data", data, "--project", p, "--url", feed.URL,
		"--header", "Authorization: Bearer secret", "--map", "body=content", "--backfill-items", "5", "--interval", "1m"))
	if src.Status != "new" || len(src.Headers) != 1 || src.Headers[0] != "Authorization" {
		t.Errorf("added %+v", src)
	}
	id := fmt.Sprint(src.ID)
	polled := mustJSON[sourceOut](t, mustCLI(t, "sources", "poll", "--data", data, "--project", p, "--id", id, "--allow-private"))
	if polled.Status != "ok" || polled.Created != 2 || polled.ItemsSeen != 2 {
		t.Errorf("polled %+v; want ok, 2 created", polled)
	}
	// Without --allow-private, a feed on loopback is refused, and says so.
	refused := mustJSON[sourceOut](t, mustCLI(t, "sources", "poll", "--data", data, "--project", p, "--id", id))
	if refused.Status != "error" || refused.LastError == "" {
		t.Errorf("polled without --allow-private: %+v; want an error", refused)
	}
	if list := mustJSON[[]sourceOut](t, mustCLI(t, "sources", "list", "--data", data, "--project", p)); len(list) != 1 || list[0].Created != 2 {
		t.Errorf("list %+v", list)
	}
	// "feeds" is the deprecated alias: the same answer, with a note.
	out, errOut, err := runCLI(t, "feeds", "list", "--data", data, "--project", p)
	if list := mustJSON[[]sourceOut](t, out); err != nil || len(list) != 1 || !strings.Contains(errOut, `"feeds" is deprecated, use "sources"`) {
		t.Errorf("narrator feeds list: %v, %+v, stderr %q; want the list and a deprecation note", err, list, errOut)
	}
	if _, errOut, _ := runCLI(t, "sources", "list", "--data", data, "--project", p); errOut != "" {
		t.Errorf("narrator sources list wrote %q to stderr", errOut)
	}
	// Another project of the account can neither poll nor remove the feed.
	other := mustJSON[projectOut](t, mustCLI(t, "projects", "create", "--data", data, "--account", fmt.Sprint(acct.ID), "--title", "Other", "--language", "en_US", "--type", "rss"))
	for _, verb := range []string{"poll", "remove"} {
		_, errOut, err := runCLI(t, "sources", verb, "--data", data, "--project", fmt.Sprint(other.ID), "--id", id)
		if err == nil || !strings.Contains(err.Error()+errOut, "feed "+id+" not found") {
			t.Errorf("narrator sources %s of another project's feed: %v, stderr %q; want feed %s not found", verb, err, errOut, id)
		}
	}
	mustCLI(t, "sources", "remove", "--data", data, "--project", p, "--id", id)
	if list := mustJSON[[]sourceOut](t, mustCLI(t, "sources", "list", "--data", data, "--project", p)); len(list) != 0 {
		t.Errorf("after remove: %+v", list)
	}
	for _, args := range [][]string{
		{"sources"},
		{"sources", "add", "--data", data, "--url", feed.URL},
		{"sources", "add", "--data", data, "--project", p, "--url", "ftp://x.example/"},
		{"sources", "add", "--data", data, "--project", p, "--url", feed.URL, "--interval", "10s"},
		{"sources", "add", "--data", data, "--project", p, "--url", feed.URL, "--header", "no colon"},
		{"sources", "add", "--data", data, "--project", fmt.Sprint(api.ID), "--url", feed.URL},
		{"sources", "remove", "--data", data, "--project", p, "--id", id},
		{"sources", "poll", "--data", data, "--project", p, "--id", "999"},
	} {
		if _, errOut, err := runCLI(t, args...); err == nil {
			t.Errorf("narrator %v succeeded", args)
		} else if err.Error() == "" && errOut == "" {
			t.Errorf("narrator %v failed without a message", args)
		}
	}
}
