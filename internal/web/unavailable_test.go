package web_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/web"
)

// downStore is a store whose ListProjects fails as a store does when its
// database cannot be reached, once down is set.
type downStore struct {
	web.Store
	down *atomic.Bool
}

func (s downStore) ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error) {
	if s.down.Load() {
		return nil, narrator.Unavailable(errors.New("dial tcp 10.0.0.9:5432: connect: connection refused"))
	}
	return s.Store.ListProjects(ctx, accountID)
}

// TestUnavailable checks that a page whose store cannot reach its
// database is a 503 error page with Retry-After, without the cause.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	b := setup(t, func(d *web.Deps) { d.Store = downStore{Store: d.Store, down: &down} })
	c, _ := b.signedIn(t)
	down.Store(true)
	res := c.get("/projects")
	wantStatus(t, res, http.StatusServiceUnavailable)
	if got := res.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
	if strings.Contains(res.body, "connection refused") || !strings.Contains(res.body, "try again shortly") {
		t.Errorf("page: %s", res.body)
	}
}
