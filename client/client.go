package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client calls one Narrator server with one API key. It is safe for
// concurrent use.
type Client struct {
	base *url.URL
	key  string
	hc   *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc instead of
// a client of its own with no timeout (contexts bound each call).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// New returns a client for the server at baseURL (its public URL, such as
// "https://narrator.example.com") that authenticates with apiKey.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an absolute http(s) URL", baseURL)
	}
	if apiKey == "" {
		return nil, errors.New("client: the API key is empty")
	}
	c := &Client{base: u, key: apiKey, hc: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

// do sends one request: in (if not nil) as the JSON body, and decodes a
// 2xx answer into out (if not nil). Other answers become *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	// path is escaped already (audio references may hold any character).
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	u.Path = unescaped
	u.RawQuery = query.Encode()
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return newError(res)
	}
	if out == nil {
		_, err := io.Copy(io.Discard, res.Body)
		return err
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("client: decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// call is do for an answer of type T; it returns T's zero value on error.
func call[T any](ctx context.Context, c *Client, method, path string, query url.Values, in any) (T, error) {
	var out T
	if err := c.do(ctx, method, path, query, in, &out); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

func projectPath(projectID int64, rest ...string) string {
	p := "/api/v3/projects/" + strconv.FormatInt(projectID, 10)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

func audioPath(projectID int64, ref string, rest ...string) string {
	return projectPath(projectID, append([]string{"audio", url.PathEscape(ref)}, rest...)...)
}
