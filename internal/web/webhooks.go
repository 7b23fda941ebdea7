package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// deliveriesShown is how many of an endpoint's latest deliveries its
// section of the webhooks page lists.
const deliveriesShown = 10

// webhookView is one endpoint on the webhooks page.
type webhookView struct {
	*narrator.Webhook
	Deliveries []*narrator.WebhookDelivery
	// NewSecret is the secret just made for this endpoint, shown once.
	NewSecret string
}

// webhooksData is the webhooks page of a project.
type webhooksData struct {
	Project  *narrator.Project
	Webhooks []webhookView
	Events   []string
	Max      int
	// Form and Error are the add form's values and its problem, if any.
	FormURL    string
	FormEvents []string
	Error      string
}

// newSecretCookie carries the secret of an endpoint just created or
// rotated from the POST to the page that shows it, once, sealed for the
// session as a new API key is (see newKeyCookie).
const newSecretCookie = "narrator_new_webhook_secret"

func webhooksPath(projectID int64) string { return fmt.Sprintf("/projects/%d/webhooks", projectID) }

func (s *Server) webhooksPage(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	return s.renderWebhooks(w, r, q, p, http.StatusOK, webhooksData{})
}

func (s *Server) renderWebhooks(w http.ResponseWriter, r *http.Request, q *request, p *narrator.Project, status int, d webhooksData) error {
	hooks, err := s.store.ListWebhooks(r.Context(), p.ID)
	if err != nil {
		return err
	}
	newID, newSecret := s.takeNewSecret(w, r, p.ID)
	d.Project, d.Events, d.Max = p, narrator.WebhookEvents(), narrator.MaxWebhooksPerProject
	for _, h := range hooks {
		ds, err := s.store.ListDeliveries(r.Context(), p.ID, h.ID, deliveriesShown)
		if err != nil {
			return err
		}
		v := webhookView{Webhook: h, Deliveries: ds}
		if h.ID == newID {
			v.NewSecret = newSecret
		}
		d.Webhooks = append(d.Webhooks, v)
	}
	return s.render(w, r, status, "webhooks", userPage(q, "Webhooks · "+p.Title, "projects", d))
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	p, err := s.project(r, q)
	if err != nil {
		return err
	}
	url := strings.TrimSpace(r.PostForm.Get("url"))
	events := r.PostForm["events"]
	h, err := narrator.NewWebhook(p.ID, url, events, s.now())
	if err == nil {
		err = s.store.CreateWebhook(r.Context(), h)
	}
	switch code := narrator.ErrorCode(err); code {
	case "":
	case narrator.EINVALID, narrator.ECONFLICT:
		return s.renderWebhooks(w, r, q, p, http.StatusBadRequest,
			webhooksData{FormURL: url, FormEvents: events, Error: narrator.ErrorMessage(err)})
	default:
		return err
	}
	if err := s.showSecretOnce(w, r, p.ID, h); err != nil {
		return err
	}
	s.setFlash(w, r, "The webhook is added. Copy its signing secret now: it is shown only once.")
	http.Redirect(w, r, webhooksPath(p.ID), http.StatusSeeOther)
	return nil
}

// showSecretOnce seals an endpoint's secret into the cookie that the
// webhooks page takes it from.
func (s *Server) showSecretOnce(w http.ResponseWriter, r *http.Request, projectID int64, h *narrator.Webhook) error {
	token, err := r.Cookie(sessionCookie)
	if err != nil {
		return fmt.Errorf("show webhook secret: no session cookie: %w", err)
	}
	sealed, err := sealNewKey(token.Value, purposeWebhookSecret, strconv.FormatInt(h.ID, 10)+" "+h.Secret, s.now().Add(newKeyTTL))
	if err != nil {
		return err
	}
	s.setSecretCookie(w, r, projectID, sealed, int(newKeyTTL/time.Second))
	return nil
}

func (s *Server) setSecretCookie(w http.ResponseWriter, r *http.Request, projectID int64, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: newSecretCookie, Value: value, Path: webhooksPath(projectID), MaxAge: maxAge,
		HttpOnly: true, Secure: s.secureRequest(r), SameSite: http.SameSiteLaxMode,
	})
}

// takeNewSecret returns the endpoint and secret the request's cookie
// carries for its session, 0 and "" if none, and deletes the cookie.
func (s *Server) takeNewSecret(w http.ResponseWriter, r *http.Request, projectID int64) (int64, string) {
	c, err := r.Cookie(newSecretCookie)
	if err != nil {
		return 0, ""
	}
	s.setSecretCookie(w, r, projectID, "", -1)
	token, err := r.Cookie(sessionCookie)
	if err != nil {
		return 0, ""
	}
	idText, secret, ok := strings.Cut(openNewKey(token.Value, purposeWebhookSecret, c.Value, s.now()), " ")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		return 0, ""
	}
	return id, secret
}

// webhook returns the request's {wid} endpoint of its project.
func (s *Server) webhook(r *http.Request, q *request) (*narrator.Webhook, error) {
	p, err := s.project(r, q)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("wid"), 10, 64)
	if err != nil || id <= 0 {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "no such webhook")
	}
	return s.store.FindWebhook(r.Context(), p.ID, id)
}

// webhookAction runs do on the request's endpoint, then goes back to the
// webhooks page with a message.
func (s *Server) webhookAction(do func(r *http.Request, h *narrator.Webhook) (string, error)) func(w http.ResponseWriter, r *http.Request, q *request) error {
	return func(w http.ResponseWriter, r *http.Request, q *request) error {
		h, err := s.webhook(r, q)
		if err != nil {
			return err
		}
		msg, err := do(r, h)
		if err != nil {
			return err
		}
		s.setFlash(w, r, msg)
		http.Redirect(w, r, webhooksPath(h.ProjectID), http.StatusSeeOther)
		return nil
	}
}

// deleteWebhookPage asks for confirmation before an endpoint is removed.
func (s *Server) deleteWebhookPage(w http.ResponseWriter, r *http.Request, q *request) error {
	h, err := s.webhook(r, q)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "webhook_delete", userPage(q, "Remove webhook", "projects", h))
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.webhookAction(func(r *http.Request, h *narrator.Webhook) (string, error) {
		return "The webhook is removed. Its pending deliveries will not be sent.", s.store.DeleteWebhook(r.Context(), h.ProjectID, h.ID)
	})(w, r, q)
}

func (s *Server) enableWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.webhookAction(func(r *http.Request, h *narrator.Webhook) (string, error) {
		_, err := s.store.EnableWebhook(r.Context(), h.ProjectID, h.ID)
		return "The webhook is enabled again. Resend the deliveries it missed if you need them.", err
	})(w, r, q)
}

func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.webhookAction(func(r *http.Request, h *narrator.Webhook) (string, error) {
		if err := s.triggers.TakeWebhookTrigger(w, q.account.ID, h.ID); err != nil {
			return "", err
		}
		_, err := s.store.TestWebhook(r.Context(), h.ProjectID, h.ID)
		return "A test delivery is on its way. Reload to see how it went.", err
	})(w, r, q)
}

func (s *Server) resendDelivery(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.webhookAction(func(r *http.Request, h *narrator.Webhook) (string, error) {
		id, err := strconv.ParseInt(r.PathValue("did"), 10, 64)
		if err != nil || id <= 0 {
			return "", narrator.Errorf(narrator.ENOTFOUND, "no such delivery")
		}
		if err := s.triggers.TakeWebhookTrigger(w, q.account.ID, h.ID); err != nil {
			return "", err
		}
		_, err = s.store.ResendDelivery(r.Context(), h.ProjectID, h.ID, id)
		return "The delivery is sent again, with the same webhook-id.", err
	})(w, r, q)
}

func (s *Server) rotateWebhook(w http.ResponseWriter, r *http.Request, q *request) error {
	h, err := s.webhook(r, q)
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
	if err := s.showSecretOnce(w, r, h.ProjectID, h); err != nil {
		return err
	}
	s.setFlash(w, r, "The webhook has a new signing secret; the old one no longer signs deliveries. Copy it now: it is shown only once.")
	http.Redirect(w, r, webhooksPath(h.ProjectID), http.StatusSeeOther)
	return nil
}
