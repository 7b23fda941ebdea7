package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// eventJSON is the body of a webhook delivery of an audio event: the v3
// Audio as single-audio answers show it, each media with its duration,
// and the event's type, project and time.
type eventJSON struct {
	audioJSON
	// Media shadows audioJSON's media with the same entries and their
	// duration.
	Media      []eventMediaJSON `json:"media"`
	ActionType string           `json:"action_type"`
	ProjectID  int64            `json:"project_id"`
	CreatedAt  time.Time        `json:"created_at"`
}

// eventMediaJSON is a v3 Media with the duration of the published audio in
// seconds; 0 while it has no URL.
type eventMediaJSON struct {
	mediaJSON
	Duration float64 `json:"duration"`
}

// testEventJSON is the body of a narrator.EventWebhookTest delivery.
type testEventJSON struct {
	ActionType string    `json:"action_type"`
	ProjectID  int64     `json:"project_id"`
	CreatedAt  time.Time `json:"created_at"`
}

// EventBody returns the renderer of webhook bodies, whose audio is the v3
// Audio of this package with media URLs made by mediaURL. docs/api.md
// shows the shape.
func EventBody(mediaURL func(key string) string) narrator.EventBodyFunc {
	return func(e *narrator.Event) ([]byte, error) {
		var v any = testEventJSON{ActionType: e.Type, ProjectID: e.ProjectID, CreatedAt: e.CreatedAt.UTC()}
		if a := e.Audio; a != nil {
			out := eventJSON{audioJSON: newAudioJSON(a, singleOrder, mediaURL),
				ActionType: e.Type, ProjectID: e.ProjectID, CreatedAt: e.CreatedAt.UTC()}
			out.Media = make([]eventMediaJSON, 0, len(out.audioJSON.Media))
			for _, m := range out.audioJSON.Media {
				var d float64
				if _, ok := m.URL.(string); ok {
					d = float64(a.DurationMS) / 1000
				}
				out.Media = append(out.Media, eventMediaJSON{mediaJSON: m, Duration: d})
			}
			v = out
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
}

// webhookJSON is a webhook endpoint on the wire (an extension of v3).
type webhookJSON struct {
	ID           int64      `json:"id"`
	ProjectID    int64      `json:"project_id"`
	URL          string     `json:"url"`
	Events       []string   `json:"events"`
	Enabled      bool       `json:"enabled"`
	DisabledAt   *time.Time `json:"disabled_at"`
	FailingSince *time.Time `json:"failing_since"`
	CreatedAt    time.Time  `json:"created_at"`
	// Secret is only in the answers that make one: a create and a rotation.
	Secret string `json:"secret,omitempty"`
}

// WebhookJSON converts an endpoint to its wire form, with its secret only
// if withSecret. It is exported for the CLI, which prints endpoints in the
// same shape.
func WebhookJSON(h *narrator.Webhook, withSecret bool) any {
	out := webhookJSON{ID: h.ID, ProjectID: h.ProjectID, URL: h.URL, Events: h.Events, Enabled: !h.Disabled(),
		DisabledAt: timeOrNil(h.DisabledAt), FailingSince: timeOrNil(h.FailingSince), CreatedAt: h.CreatedAt.UTC()}
	if withSecret {
		out.Secret = h.Secret
	}
	return out
}

// deliveryJSON is a webhook delivery on the wire (an extension of v3).
type deliveryJSON struct {
	ID            int64           `json:"id"`
	WebhookID     int64           `json:"webhook_id"`
	MessageID     string          `json:"message_id"`
	Event         string          `json:"event"`
	AudioID       *int64          `json:"audio_id"`
	State         string          `json:"state"`
	Attempts      int             `json:"attempts"`
	ResponseCode  *int            `json:"response_code"`
	LastError     string          `json:"last_error"`
	CreatedAt     time.Time       `json:"created_at"`
	LastAttemptAt *time.Time      `json:"last_attempt_at"`
	Payload       json.RawMessage `json:"payload"`
}

// DeliveryJSON converts a delivery to its wire form. It is exported for
// the CLI.
func DeliveryJSON(d *narrator.WebhookDelivery) any {
	out := deliveryJSON{ID: d.ID, WebhookID: d.WebhookID, MessageID: d.MessageID, Event: d.Event, State: d.State,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), LastAttemptAt: timeOrNil(d.LastAttemptAt),
		Payload: json.RawMessage("null")}
	if d.AudioID != 0 {
		out.AudioID = &d.AudioID
	}
	if d.ResponseCode != 0 {
		out.ResponseCode = &d.ResponseCode
	}
	if json.Valid(d.Body) {
		out.Payload = d.Body
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// list returns a parameter that holds a list of strings: a JSON array of
// strings, or in JSON, forms and queries one or more comma-separated
// strings. Absent means nil; present but empty means an empty, non-nil
// list.
func (p *params) list(name string) ([]string, error) {
	if raw, ok := p.json[name]; ok {
		var arr []string
		if err := json.Unmarshal(raw, &arr); err == nil {
			if arr == nil {
				arr = []string{} // null
			}
			return arr, nil
		}
	}
	var vs []string
	switch {
	case p.json != nil:
		v, ok, err := p.str(name, false)
		if err != nil {
			return nil, narrator.Errorf(narrator.EINVALID, "%s must be an array of strings", name)
		}
		if ok {
			vs = []string{v}
		}
	case p.form[name] != nil:
		vs = p.form[name]
	default:
		vs = p.query[name]
	}
	var out []string
	if vs != nil {
		out = []string{}
	}
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// webhook resolves the path's project and webhook_id within the caller's
// account.
func (s *Server) webhook(r *http.Request, c *call) (*narrator.Webhook, error) {
	p, err := s.project(r, c)
	if err != nil {
		return nil, err
	}
	id, err := pathID(r, "webhook_id")
	if err != nil {
		return nil, err
	}
	return s.store.FindWebhook(r.Context(), p.ID, id)
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	hooks, err := s.store.ListWebhooks(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeList(w, hooks, func(h *narrator.Webhook) any { return WebhookJSON(h, false) })
	return nil
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := s.project(r, c)
	if err != nil {
		return err
	}
	u, _, err := c.params.str("url", false)
	if err != nil {
		return err
	}
	events, err := c.params.list("events")
	if err != nil {
		return err
	}
	if events != nil && len(events) == 0 {
		return narrator.Errorf(narrator.EINVALID, "events must name at least one event; leave it out to subscribe to all")
	}
	h, err := narrator.NewWebhook(p.ID, u, events, s.now())
	if err != nil {
		return err
	}
	if err := s.store.CreateWebhook(r.Context(), h); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, WebhookJSON(h, true))
	return nil
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, WebhookJSON(h, false))
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteWebhook(r.Context(), h.ProjectID, h.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, WebhookJSON(h, false))
	return nil
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	secret, err := narrator.NewWebhookSecret()
	if err != nil {
		return err
	}
	if h, err = s.store.RotateWebhookSecret(r.Context(), h.ProjectID, h.ID, secret); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, WebhookJSON(h, true))
	return nil
}

func (s *Server) enableWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	if h, err = s.store.EnableWebhook(r.Context(), h.ProjectID, h.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, WebhookJSON(h, false))
	return nil
}

func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	if err := s.triggers.TakeWebhookTrigger(w, c.accountID, h.ID); err != nil {
		return err
	}
	d, err := s.store.TestWebhook(r.Context(), h.ProjectID, h.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, DeliveryJSON(d))
	return nil
}

// MaxDeliveriesPerPage is how many deliveries a list shows unless the
// request asks for fewer.
const MaxDeliveriesPerPage = narrator.MaxDeliveriesListed

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	limit := MaxDeliveriesPerPage
	if v, ok, err := c.params.str("limit", true); err != nil {
		return err
	} else if ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxDeliveriesPerPage {
			return narrator.Errorf(narrator.EINVALID, "limit must be a whole number from 1 to %d", MaxDeliveriesPerPage)
		}
		limit = n
	}
	ds, err := s.store.ListDeliveries(r.Context(), h.ProjectID, h.ID, limit)
	if err != nil {
		return err
	}
	writeList(w, ds, DeliveryJSON)
	return nil
}

func (s *Server) resendDelivery(w http.ResponseWriter, r *http.Request, c *call) error {
	h, err := s.webhook(r, c)
	if err != nil {
		return err
	}
	id, err := pathID(r, "delivery_id")
	if err != nil {
		return err
	}
	if err := s.triggers.TakeWebhookTrigger(w, c.accountID, h.ID); err != nil {
		return err
	}
	d, err := s.store.ResendDelivery(r.Context(), h.ProjectID, h.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, DeliveryJSON(d))
	return nil
}
