package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/clientip"
	"github.com/narrator/narrator/internal/config"
	fetcher "github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/listens"
	"github.com/narrator/narrator/internal/player"
	"github.com/narrator/narrator/internal/ratelimit"
	"github.com/narrator/narrator/internal/speak"
	"github.com/narrator/narrator/internal/voicecat"
	"github.com/narrator/narrator/internal/web"
)

// newDashboard builds the dashboard served at "/". Requests for unknown
// paths that do not ask for HTML go to notFound (the API's JSON 404);
// "Import from URL" reads pages with pages, and "Poll now" sources with
// sources.
func newDashboard(cfg config.Config, st purgingStore, b *backends, voices *voicecat.Source, rules *speak.RuleCache, triggers *ratelimit.Limiter, logger *slog.Logger, notFound http.Handler, pages web.PageReader, sources web.SourcePoller, clips dashClips) (http.Handler, error) {
	u, err := url.Parse(cfg.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse public URL: %w", err)
	}
	m, err := url.Parse(cfg.MediaURL(""))
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse media URL: %w", err)
	}
	proxies, err := cfg.TrustedProxyPrefixes()
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	dash, err := web.New(web.Deps{
		Store:            st,
		Logger:           logger,
		MediaURL:         cfg.MediaURL,
		FeedURL:          func(token string) string { return cfg.PublicURL + narrator.FeedPath(token) },
		Previews:         b.queue,
		Queue:            b.queue,
		Resynthesis:      b.queue,
		Media:            b.media,
		Voices:           voices,
		Pages:            pages,
		Sources:          sources,
		Clips:            clips.decoder,
		ClipSpeaker:      clips.speaker,
		Artwork:          artworkChecker{fetcher.New(fetcher.Options{AllowPrivate: cfg.WebhooksAllowPrivate, Logger: logger})},
		SecureCookies:    u.Scheme == "https",
		PublicOrigin:     u.Scheme + "://" + u.Host,
		MediaOrigin:      m.Scheme + "://" + m.Host,
		NotFound:         notFound,
		TrustedProxies:   proxies,
		RuleCache:        rules,
		MaxAudioDuration: cfg.MaxAudioDuration,
		WebhookTriggers:  triggers,
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return dash, nil
}

// dashClips are what the dashboard sets intros and outros with: a decoder
// of uploads, and a speaker of texts (nil on a node that does not
// synthesise).
type dashClips struct {
	decoder web.ClipDecoder
	speaker web.ClipSpeaker
}

// newEmbed builds the embeddable player served at /embed.js and /embed/.
// Its pages allow the media's origin, which --media-base-url may move.
// Listening events are counted per client as the dashboard's sign-in
// limits name clients: forwarded addresses only from trusted proxies.
func newEmbed(cfg config.Config, st purgingStore, counter *listens.Counter, logger *slog.Logger) (http.Handler, error) {
	u, err := url.Parse(cfg.MediaURL(""))
	if err != nil {
		return nil, fmt.Errorf("embed: parse media URL: %w", err)
	}
	proxies, err := cfg.TrustedProxyPrefixes()
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	h, err := player.New(player.Deps{
		Store:       st,
		Listens:     counter,
		ClientKey:   clientip.New(proxies).Key,
		Logger:      logger,
		MediaURL:    cfg.MediaURL,
		MediaOrigin: u.Scheme + "://" + u.Host,
	})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return h, nil
}
