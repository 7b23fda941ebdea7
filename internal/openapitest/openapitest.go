// Package openapitest checks HTTP exchanges against the service's OpenAPI
// document with kin-openapi, a maintained validator, for tests: the golden
// answers of the API and every exchange of the end-to-end tests.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/narrator/narrator/internal/openapi"
)

// Validator checks requests and answers against the document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// Load reads the embedded document, validates it as OpenAPI (3.1, which
// the document declares) and builds its router.
func Load(ctx context.Context) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("validate the OpenAPI document: %w", err)
	}
	// The document's one server is "/": the origin that serves it, whatever
	// that is. The router routes on the path alone, whatever origin a
	// client's request names, when it is given no server.
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		return nil, fmt.Errorf("the OpenAPI document's servers are not just \"/\"")
	}
	routed := *doc
	routed.Servers = nil
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &Validator{doc: doc, router: router}, nil
}

// MustLoad is Load for tests: it fails tb on error.
func MustLoad(tb testing.TB) *Validator {
	tb.Helper()
	v, err := Load(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Doc returns the loaded document.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// CheckSchema validates a JSON value against the document's component
// schema of that name.
func (v *Validator) CheckSchema(name string, data []byte) error {
	ref, ok := v.doc.Components.Schemas[name]
	if !ok || ref.Value == nil {
		return fmt.Errorf("the document has no schema %s", name)
	}
	var value any
	if err := json.Unmarshal(data, &value); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := ref.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Check validates one exchange: req, whose body is reqBody, and the answer
// with status, header and body.
//
//   - An answer on a path or method that the document lacks is an error
//     under /api/, unless it is a JSON error body (the 404 of an unknown
//     route, the 405 of a method a path does not support); other paths
//     (the dashboard, the player's pages) are not in the document, and
//     pass.
//   - The request is checked only when the server accepted it (a status
//     below 400): tests send malformed requests on purpose.
//   - The answer is always checked: its status, its content type and,
//     for JSON, its body. body nil skips the body of a non-JSON answer.
func (v *Validator) Check(ctx context.Context, req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	return v.check(ctx, req, reqBody, true, status, header, body)
}

// CheckResponse is Check without the request's checks, for exchanges whose
// request body is not known, such as the golden files'.
func (v *Validator) CheckResponse(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	return v.check(ctx, req, nil, false, status, header, body)
}

func (v *Validator) check(ctx context.Context, req *http.Request, reqBody []byte, checkRequest bool, status int, header http.Header, body []byte) error {
	// The router matches the decoded path, where an escaped slash inside
	// a path parameter (an external_id such as "news/2026/lib") would look
	// like a segment boundary: route on the escaped path instead.
	req = req.Clone(ctx)
	req.URL.Path, req.URL.RawPath = req.URL.EscapedPath(), ""
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		if !strings.HasPrefix(req.URL.Path, "/api/") {
			return nil
		}
		if status < 400 {
			return fmt.Errorf("%s %s answered %d but is not in the document: %w", req.Method, req.URL.Path, status, err)
		}
		if ct := mediaType(header); ct != "application/json" {
			return fmt.Errorf("%s %s: error answer %d has Content-Type %q", req.Method, req.URL.Path, status, ct)
		}
		return v.CheckSchema("Error", body)
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if checkRequest && status < 400 {
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("request %s %s (answered %d): %w", req.Method, req.URL.Path, status, err)
		}
	}
	ct := mediaType(header)
	if !isJSON(ct) {
		if err := v.checkContentType(route, status, ct); err != nil {
			return fmt.Errorf("answer to %s %s: %w", req.Method, req.URL.Path, err)
		}
		if body == nil {
			opts.ExcludeResponseBody = true
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("answer %d to %s %s: %w", status, req.Method, req.URL.Path, err)
	}
	return nil
}

// checkContentType checks that the operation documents ct for status, for
// answers whose body is not checked.
func (v *Validator) checkContentType(route *routers.Route, status int, ct string) error {
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("status %d is not documented", status)
	}
	if len(resp.Value.Content) == 0 {
		return nil
	}
	if ct == "" && status == http.StatusNotModified {
		return nil
	}
	if resp.Value.Content.Get(ct) == nil {
		return fmt.Errorf("status %d: Content-Type %q is not documented", status, ct)
	}
	return nil
}

func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func isJSON(mt string) bool { return mt == "application/json" }

// Transport returns a RoundTripper that sends requests through next and
// checks every exchange against the document, failing tb on a mismatch.
// JSON answers are read whole and handed on unchanged; other answers
// (media, which may stream) are checked without their body.
func (v *Validator) Transport(tb testing.TB, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{v: v, tb: tb, next: next}
}

type transport struct {
	v    *Validator
	tb   testing.TB
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		reqBody, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	send := req.Clone(req.Context())
	send.Body = io.NopCloser(bytes.NewReader(reqBody))
	if reqBody == nil {
		send.Body = http.NoBody
	}
	res, err := t.next.RoundTrip(send)
	if err != nil {
		return nil, err
	}
	var body []byte
	if isJSON(mediaType(res.Header)) {
		body, err = io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	check := req.Clone(context.WithoutCancel(req.Context()))
	if err := t.v.Check(check.Context(), check, reqBody, res.StatusCode, res.Header, body); err != nil {
		t.tb.Errorf("OpenAPI mismatch: %v\nbody: %.2000s", err, body)
	}
	return res, nil
}
