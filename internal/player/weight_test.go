package player_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"regexp"
	"testing"
)

// The player's weight budget, gzipped as served: the loader that runs on
// every article page, and the player in its iframe (its page, script and
// styles). bench/player-weight.sh prints the figures.
const (
	loaderBudget = 5_000
	playerBudget = 30_000
)

// gzipped returns the size of body gzipped at the default level.
func gzipped(t *testing.T, body string) int {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// TestWeightBudget checks the loader and the player against their
// budgets, and that the player page names nothing on another origin
// but its media's.
func TestWeightBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.audio(t, "weight", "")
	b.finish(t, a, "t-weight")
	size := func(path string) (int, string) {
		res := b.get(t, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		return gzipped(t, res.body), res.body
	}
	loader, _ := size("/embed.js")
	page, body := size(fmt.Sprintf("/embed/%d?external_id=weight", b.project.ID))
	script, _ := size("/embed/player.js")
	styles, _ := size("/embed/player.css")
	t.Logf("gzipped: loader %d B, player %d B (page %d, script %d, styles %d)", loader, page+script+styles, page, script, styles)
	if loader > loaderBudget {
		t.Errorf("the loader is %d B gzipped, over its budget of %d", loader, loaderBudget)
	}
	if player := page + script + styles; player > playerBudget {
		t.Errorf("the player is %d B gzipped, over its budget of %d", player, playerBudget)
	}
	for _, u := range regexp.MustCompile(`(?:src|href)="(https?:[^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !regexp.MustCompile(`^https://media\.test/`).MatchString(u[1]) {
			t.Errorf("the player page loads %s, from another origin than its own or its media's", u[1])
		}
	}
}
