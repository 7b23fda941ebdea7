package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narrator/narrator/client"
)

func TestPublicationAndAccess(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := mustClient(t, apiKey)
	// An external ID of this run's own: a draft left by an earlier run
	// (go test -count) stays a draft when its article is sent again.
	id := fmt.Sprintf("publish-%d", time.Now().UnixNano())
	if _, err := c.CreateAudio(ctx, projectID, client.NewAudio{Body: "Published when I say.", ExternalID: id}); err != nil {
		t.Fatal(err)
	}
	p, err := c.Publication(ctx, projectID, id)
	if err != nil || p.State != client.PublicationPublished || !p.Public {
		t.Fatalf("Publication = %+v, %v", p, err)
	}
	at := time.Date(2999, 1, 2, 3, 4, 5, 0, time.UTC)
	if p, err = c.SetPublication(ctx, projectID, id, client.PublicationScheduled, at); err != nil ||
		p.State != client.PublicationScheduled || p.PublishAt == nil || !p.PublishAt.Equal(at) || p.Public {
		t.Errorf("SetPublication(scheduled) = %+v, %v", p, err)
	}
	if p, err = c.SetPublication(ctx, projectID, id, client.PublicationDraft, time.Time{}); err != nil || p.State != client.PublicationDraft {
		t.Errorf("SetPublication(draft) = %+v, %v", p, err)
	}
	var ce *client.Error
	if _, err := c.SetPublication(ctx, projectID, id, "hidden", time.Time{}); !errors.As(err, &ce) || ce.StatusCode != 400 {
		t.Errorf("SetPublication(hidden) = %v, want a 400", err)
	}

	// The project stays public: other tests play its media.
	a, err := c.RotateEmbedSecret(ctx, projectID)
	if err != nil || len(a.SigningSecret) < 40 || !a.HasSigningSecret || a.Mode != client.AccessPublic {
		t.Fatalf("RotateEmbedSecret = %+v, %v", a, err)
	}
	a, err = c.SetAccess(ctx, projectID, client.AccessUpdate{AllowedOrigins: []string{"https://news.test"}})
	if err != nil || len(a.AllowedOrigins) != 1 || a.SigningSecret != "" {
		t.Errorf("SetAccess = %+v, %v", a, err)
	}
	if got, err := c.Access(ctx, projectID); err != nil || got.AllowedOrigins[0] != "https://news.test" || got.Mode != client.AccessPublic {
		t.Errorf("Access = %+v, %v", got, err)
	}
}
