// Package webhook sends webhook deliveries: signed per the Standard
// Webhooks specification, through internal/fetch's client, which refuses
// to connect to loopback, private and other internal addresses unless
// told otherwise.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
)

// Headers of a delivery, per Standard Webhooks.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Defaults of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 3
)

// maxResponseBytes is how much of an answer is read; the rest is dropped.
const maxResponseBytes = 64 << 10

// Sign returns the webhook-signature header of a delivery: "v1," and the
// base64 of the HMAC-SHA256, keyed with the secret's decoded bytes, of
// msgID, ".", the Unix timestamp in seconds, ".", and the body.
func Sign(secret, msgID string, timestamp time.Time, body []byte) (string, error) {
	key, err := narrator.WebhookSecretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", msgID, timestamp.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Options configures a Client.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// other internal addresses. Off in production: a webhook URL is
	// whatever a customer typed, and must not reach into the network the
	// server runs in.
	AllowPrivate bool
	// Timeout bounds one attempt, redirects included; DefaultTimeout when 0.
	Timeout time.Duration
	// MaxRedirects is how many redirects an attempt follows;
	// DefaultMaxRedirects when 0, none when negative.
	MaxRedirects int
	// Logger gets a line per refused address; discarded when nil. It never
	// gets secrets.
	Logger *slog.Logger
	// Now is the clock of webhook-timestamp; time.Now when nil.
	Now func() time.Time
}

// Client sends deliveries.
type Client struct {
	http    *fetch.Client
	timeout time.Duration
	now     func() time.Time
}

// New returns a client. It sends through a fetch.Client, which refuses
// internal addresses at connect time, ignores proxy settings, and drops a
// delivery's headers on a redirect to another host.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Client{
		http: fetch.New(fetch.Options{
			AllowPrivate:   opts.AllowPrivate,
			ConnectTimeout: opts.Timeout,
			HeaderTimeout:  opts.Timeout,
			Timeout:        opts.Timeout,
			MaxRedirects:   opts.MaxRedirects,
			UserAgent:      userAgent,
			Logger:         opts.Logger,
		}),
		timeout: opts.Timeout,
		now:     opts.Now,
	}
}

// userAgent names the sender of deliveries.
const userAgent = "Narrator-Webhooks/1"

// Send makes one attempt at a delivery to its endpoint h: a POST of its
// body, signed with h's secret, with the delivery's message ID. It reports
// the outcome; only a 2xx answer is a success. The error text is safe to
// show to the endpoint's owner and holds no secret.
func (c *Client) Send(ctx context.Context, h *narrator.Webhook, d *narrator.WebhookDelivery) narrator.WebhookAttempt {
	now := c.now()
	a := narrator.WebhookAttempt{At: now}
	sig, err := Sign(h.Secret, d.MessageID, now, d.Body)
	if err != nil {
		a.Error = "the endpoint's secret is not valid"
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(d.Body))
	if err != nil {
		a.Error = "the endpoint's URL is not valid"
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderID, d.MessageID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	resp, err := c.http.Do(req)
	if err != nil {
		a.Error = describe(err)
		return a
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	a.ResponseCode = resp.StatusCode
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		a.Error = fmt.Sprintf("the endpoint answered %d %s; only 307 and 308 redirects, which keep the POST, are followed", resp.StatusCode, http.StatusText(resp.StatusCode))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		a.Error = fmt.Sprintf("the endpoint answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return a
}

// describe says why a request got no answer, without the URL (which may
// carry a receiver's token in its query).
func describe(err error) string {
	switch {
	case errors.Is(err, fetch.ErrRefused):
		return "refused: " + fetch.Describe(err)
	case errors.As(err, new(*net.DNSError)):
		// The resolver's own address stays out of the message.
		return "the endpoint's host name could not be resolved"
	default:
		return fetch.Describe(err)
	}
}
