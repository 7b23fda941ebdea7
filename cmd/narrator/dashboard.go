package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/web"
)

// newDashboard builds the dashboard served at "/". Requests for unknown
// paths that do not ask for HTML go to notFound (the API's JSON 404).
func newDashboard(cfg config.Config, st purgingStore, pipe *pipeline.Pipeline, logger *slog.Logger, notFound http.Handler) (http.Handler, error) {
	u, err := url.Parse(cfg.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse public URL: %w", err)
	}
	d := web.Deps{
		Store:         st,
		Logger:        logger,
		MediaURL:      cfg.MediaURL,
		PreviewDir:    filepath.Join(cfg.DataDir, "cache", "previews"),
		SecureCookies: u.Scheme == "https",
		PublicOrigin:  u.Scheme + "://" + u.Host,
		NotFound:      notFound,
	}
	if pipe != nil {
		d.Previews = pipe
	}
	dash, err := web.New(d)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return dash, nil
}
