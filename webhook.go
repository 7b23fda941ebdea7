package narrator

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Webhook events: the changes to an audio that a project's endpoints hear
// of. AudioEvent says which change raises which.
const (
	EventAudioProcessed = "audio.processed" // new speech was published
	EventAudioFailed    = "audio.failed"    // synthesis gave up
	EventAudioUpdated   = "audio.updated"   // what is spoken changed; resynthesis began
	EventAudioDeleted   = "audio.deleted"   // the audio was deleted
	// EventWebhookTest is what a test of an endpoint sends, whatever the
	// endpoint subscribes to and even when it is disabled.
	EventWebhookTest = "webhook.test"
)

// WebhookEvents returns the events an endpoint can subscribe to, in the
// order endpoints list them.
func WebhookEvents() []string {
	return []string{EventAudioProcessed, EventAudioFailed, EventAudioUpdated, EventAudioDeleted}
}

// Limits and rules of webhook endpoints.
const (
	MaxWebhookURLChars = 2_048
	// MaxWebhooksPerProject bounds the endpoints of one project, and so
	// the deliveries one change writes.
	MaxWebhooksPerProject = 20
	// WebhookDisableAfter is how long an endpoint's deliveries may fail
	// without a single success before the endpoint is disabled.
	WebhookDisableAfter = 24 * time.Hour
	// WebhookSecretPrefix starts every endpoint secret (Standard Webhooks).
	WebhookSecretPrefix = "whsec_"
)

// AudioEvent names the webhook event that a stored change of an audio from
// before to after raises, or "" for none. It is the one rule every store
// follows: a delete raises audio.deleted; a new revision whose title, body
// or author changed (PlanUpdate's Resynthesize) raises audio.updated, while a
// new revision of the same text (a resynthesis) raises nothing; becoming
// processed raises audio.processed and becoming failed audio.failed.
func AudioEvent(before, after *Audio) string {
	switch {
	case after.Deleted:
		if before.Deleted {
			return ""
		}
		return EventAudioDeleted
	case after.Revision != before.Revision:
		if before.SpokenEqual(after) {
			return ""
		}
		return EventAudioUpdated
	case after.State == before.State:
		return ""
	case after.State == StateProcessed:
		return EventAudioProcessed
	case after.State == StateFailed:
		return EventAudioFailed
	default:
		return ""
	}
}

// Event is a change that webhook endpoints hear of.
type Event struct {
	Type      string // one of WebhookEvents, or EventWebhookTest
	ProjectID int64
	// Audio is the audio as stored after the change, with its media; nil
	// for EventWebhookTest.
	Audio     *Audio
	CreatedAt time.Time
}

// EventBodyFunc renders an event as the body its deliveries carry. Stores
// call it once per event, inside the transaction of the change, and keep
// the body, so that retries and resends send the very same bytes.
type EventBodyFunc func(e *Event) ([]byte, error)

// Webhook is an endpoint of a project that hears of its audios' changes.
type Webhook struct {
	ID        int64
	ProjectID int64
	URL       string
	// Events are the subscribed events, distinct, in WebhookEvents order.
	Events []string
	// Secret signs deliveries: WebhookSecretPrefix and the base64 of random
	// bytes. It is shown to people only when it is made.
	Secret string
	// DisabledAt is when the endpoint was disabled after failing for
	// WebhookDisableAfter; zero while it is enabled.
	DisabledAt time.Time
	// FailingSince is the first failed attempt since the last success; zero
	// when the last attempt succeeded or there was none.
	FailingSince time.Time
	CreatedAt    time.Time
}

// NewWebhook returns a valid new endpoint of a project, with a new secret,
// subscribed to events (all of them when none are given). It returns an
// EINVALID *Error for a bad URL or an unknown event.
func NewWebhook(projectID int64, rawURL string, events []string, now time.Time) (*Webhook, error) {
	secret, err := NewWebhookSecret()
	if err != nil {
		return nil, err
	}
	h := &Webhook{ProjectID: projectID, URL: strings.TrimSpace(rawURL), Secret: secret, CreatedAt: now}
	if h.Events, err = normalizeEvents(events); err != nil {
		return nil, err
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h, nil
}

// normalizeEvents returns the distinct events in WebhookEvents order, all
// of them for an empty list.
func normalizeEvents(events []string) ([]string, error) {
	all := WebhookEvents()
	if len(events) == 0 {
		return all, nil
	}
	for _, e := range events {
		if !slices.Contains(all, strings.TrimSpace(e)) {
			return nil, Errorf(EINVALID, "event %q is not one of %s", e, strings.Join(all, ", "))
		}
	}
	var out []string
	for _, e := range all {
		if slices.ContainsFunc(events, func(s string) bool { return strings.TrimSpace(s) == e }) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Validate checks an endpoint's URL and events.
func (h *Webhook) Validate() error {
	if h.URL == "" {
		return Errorf(EINVALID, "url is required")
	}
	if n := utf8.RuneCountInString(h.URL); n > MaxWebhookURLChars {
		return Errorf(EINVALID, "url is %d characters long; at most %d are allowed", n, MaxWebhookURLChars)
	}
	if err := checkText("url", h.URL); err != nil {
		return err
	}
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return Errorf(EINVALID, "url must be an absolute http or https URL")
	}
	if u.User != nil {
		return Errorf(EINVALID, "url must not hold a user name or password")
	}
	if u.Fragment != "" {
		return Errorf(EINVALID, "url must not have a #fragment")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Errorf(EINVALID, "url has port %s; a port is 1 to 65535", port)
		}
	}
	if strings.ContainsFunc(h.URL, func(r rune) bool { return r <= ' ' || strings.ContainsRune("\"<>\\^`{|}", r) }) {
		return Errorf(EINVALID, "url must not hold spaces or any of \" < > \\ ^ ` { | }; percent-encode them")
	}
	if len(h.Events) == 0 {
		return Errorf(EINVALID, "an endpoint must subscribe to at least one event")
	}
	if _, err := normalizeEvents(h.Events); err != nil {
		return err
	}
	if !strings.HasPrefix(h.Secret, WebhookSecretPrefix) {
		return Errorf(EINVALID, "the secret must start with %s", WebhookSecretPrefix)
	}
	return nil
}

// Disabled reports whether the endpoint was disabled for failing.
func (h *Webhook) Disabled() bool { return !h.DisabledAt.IsZero() }

// Wants reports whether the endpoint is to get a delivery of event: a test
// always, an audio event while it is enabled and subscribed to it.
func (h *Webhook) Wants(event string) bool {
	if event == EventWebhookTest {
		return true
	}
	return !h.Disabled() && slices.Contains(h.Events, event)
}

// NewWebhookSecret returns a new endpoint secret: WebhookSecretPrefix and
// the standard base64 of 32 random bytes, which are the HMAC key.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", Errorf(EINTERNAL, "read random bytes: %v", err)
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// WebhookSecretKey returns the HMAC key of a secret: the base64-decoded
// part after WebhookSecretPrefix.
func WebhookSecretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return nil, Errorf(EINVALID, "a webhook secret starts with %s", WebhookSecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return nil, Errorf(EINVALID, "a webhook secret is %s and base64", WebhookSecretPrefix)
	}
	return key, nil
}

// NewMessageID returns a new delivery's webhook-id: "msg_" and 32 hex
// digits of randomness.
func NewMessageID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", Errorf(EINTERNAL, "read random bytes: %v", err)
	}
	return "msg_" + hex.EncodeToString(b), nil
}

// Delivery states.
const (
	DeliveryPending   = "pending"   // not yet delivered; attempts continue
	DeliveryDelivered = "delivered" // an attempt got a 2xx answer
	DeliveryFailed    = "failed"    // attempts gave up, or the endpoint is disabled
)

// Limits of the calls that queue a delivery on demand, test and resend:
// each delivery is retried for a day, so a burst of them would fill the
// queue for long. They are counted per node, in memory: per endpoint, a
// burst of WebhookTriggerBurst, then one every WebhookTriggerEvery; per
// account, over all its endpoints, a burst of AccountTriggerBurst, then
// one every AccountTriggerEvery.
const (
	WebhookTriggerBurst = 10
	WebhookTriggerEvery = 6 * time.Second
	AccountTriggerBurst = 30
	AccountTriggerEvery = 2 * time.Second
)

// MaxDeliveriesListed is how many of an endpoint's latest deliveries are
// kept listed; older ones are pruned as new ones arrive.
const MaxDeliveriesListed = 100

// WebhookDelivery is one event sent, or to be sent, to one endpoint.
type WebhookDelivery struct {
	ID        int64
	WebhookID int64
	// MessageID is the webhook-id header: the same for every attempt and
	// every resend, so that receivers can drop duplicates.
	MessageID string
	Event     string
	AudioID   int64 // 0 for a test
	Body      []byte
	State     string // DeliveryPending, DeliveryDelivered or DeliveryFailed
	Attempts  int
	// ResponseCode is the HTTP status of the last attempt; 0 if it got none.
	ResponseCode int
	// LastError says why the last attempt failed; "" after a success.
	LastError     string
	CreatedAt     time.Time
	LastAttemptAt time.Time // zero before the first attempt
}

// NewDelivery returns the delivery of an event's body to an endpoint, with
// a new message ID, pending.
func NewDelivery(h *Webhook, e *Event, body []byte) (*WebhookDelivery, error) {
	id, err := NewMessageID()
	if err != nil {
		return nil, err
	}
	d := &WebhookDelivery{WebhookID: h.ID, MessageID: id, Event: e.Type, Body: body,
		State: DeliveryPending, CreatedAt: e.CreatedAt}
	if e.Audio != nil {
		d.AudioID = e.Audio.ID
	}
	return d, nil
}

// WebhookAttempt is the outcome of one attempt at a delivery.
type WebhookAttempt struct {
	At           time.Time
	ResponseCode int    // 0 if no answer came
	Error        string // "" when the endpoint answered 2xx
	// Final is set on the last attempt the queue makes of this delivery.
	Final bool
}

// OK reports whether the attempt succeeded.
func (a *WebhookAttempt) OK() bool { return a.Error == "" }

// AttemptPlan is what recording an attempt comes to.
type AttemptPlan struct {
	// State is the delivery's new state.
	State string
	// FailingSince is the endpoint's new FailingSince.
	FailingSince time.Time
	// Disable is set when this attempt disables the endpoint.
	Disable bool
}

// PlanAttempt applies an attempt at a delivery to its endpoint h, as
// stored. A success delivers and resets the endpoint's failure clock. A
// failure starts the clock if it is not running, and disables the endpoint
// once it has run for WebhookDisableAfter; the delivery then fails for good,
// as it does after the final attempt, and otherwise stays pending. A final
// attempt that does not disable the endpoint stops the clock.
func PlanAttempt(h *Webhook, a WebhookAttempt) AttemptPlan {
	if a.OK() {
		return AttemptPlan{State: DeliveryDelivered}
	}
	p := AttemptPlan{State: DeliveryPending, FailingSince: h.FailingSince}
	if p.FailingSince.IsZero() {
		p.FailingSince = a.At
	}
	p.Disable = !h.Disabled() && a.At.Sub(p.FailingSince) >= WebhookDisableAfter
	if a.Final || p.Disable || h.Disabled() {
		p.State = DeliveryFailed
	}
	if a.Final && !p.Disable {
		// A delivery given up on before the endpoint failed for a day
		// (a resend, a test, or attempts cut short) leaves no clock running
		// that one failure weeks later would find expired.
		p.FailingSince = time.Time{}
	}
	return p
}
