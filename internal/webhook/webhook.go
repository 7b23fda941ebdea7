// Package webhook sends webhook deliveries: signed per the Standard
// Webhooks specification, over an HTTP client that refuses to connect to
// loopback, private and other internal addresses unless told otherwise.
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
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/narrator/narrator"
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
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
}

// New returns a client. Its transport ignores proxy settings, since a
// proxy would connect on its behalf to addresses it must not reach.
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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}
	if !opts.AllowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			err := CheckAddress(address)
			if err != nil {
				opts.Logger.Warn("webhook delivery refused", "address", address, "err", err)
			}
			return err
		}
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
	}
	maxRedirects := max(opts.MaxRedirects, 0)
	return &Client{
		http: &http.Client{
			Transport: transport,
			Timeout:   opts.Timeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > maxRedirects {
					return fmt.Errorf("stopped after %d redirects", maxRedirects)
				}
				if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
					return fmt.Errorf("redirect to a %s URL", req.URL.Scheme)
				}
				if req.Method != http.MethodPost {
					// A 301, 302 or 303 would turn the delivery into an
					// empty GET: the redirect itself is the answer, a
					// failure that says so.
					return http.ErrUseLastResponse
				}
				return nil
			},
		},
		timeout: opts.Timeout,
		now:     opts.Now,
	}
}

// ErrRefused is the error of a connection to an address deliveries must
// not reach.
var ErrRefused = errors.New("address not allowed for webhooks")

// refusedPrefixes are the ranges deliveries never reach besides those the
// netip predicates name: shared (CGNAT) space, "this network", IETF
// protocol assignments, benchmarking, reserved and broadcast, and NAT64,
// which maps onto IPv4 addresses of any kind.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// CheckAddress returns an error wrapping ErrRefused unless address, an
// IP:port as a dialer gets it after name resolution, is a public unicast
// address: not loopback, private (IPv4 RFC 1918 or IPv6 unique local),
// link-local, unspecified, multicast, shared (CGNAT) or reserved.
func CheckAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not host:port", ErrRefused, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrRefused, host)
	}
	ip = ip.Unmap().WithZone("")
	switch {
	case ip.IsLoopback(), ip.IsPrivate(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(),
		ip.IsInterfaceLocalMulticast(), ip.IsMulticast(), ip.IsUnspecified():
		return fmt.Errorf("%w: %s is not a public address", ErrRefused, ip)
	}
	for _, p := range refusedPrefixes {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is not a public address", ErrRefused, ip)
		}
	}
	return nil
}

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
	req.Header.Set("User-Agent", "Narrator-Webhooks/1")
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
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, ErrRefused):
		return "refused: the endpoint's address is loopback, private or reserved"
	case errors.Is(err, context.DeadlineExceeded), ue != nil && ue.Timeout():
		return "no answer within the time limit"
	case errors.Is(err, context.Canceled):
		return "the attempt was cancelled"
	case errors.As(err, new(*net.DNSError)):
		// The resolver's own address stays out of the message.
		return "the endpoint's host name could not be resolved"
	default:
		return err.Error()
	}
}
