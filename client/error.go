package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// The v3 error codes the server answers. Later versions may add codes;
// an unknown code is best handled by its HTTP status.
const (
	CodeInvalid      = 10 // a field is missing or wrong, or the body is too large
	CodeUnauthorized = 20 // no valid API key
	CodeNotFound     = 30 // no such route, project, audio or other resource
	CodeConflict     = 40 // the request conflicts with the resource's state
	CodeInternal     = 50 // the server failed
)

// Error is an error answer of the server.
type Error struct {
	// StatusCode is the HTTP status, such as 404.
	StatusCode int
	// Code is the v3 error code (see the Code constants); 0 if the answer
	// was not a v3 error body.
	Code int
	// Message is the server's message, safe to show to a person.
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("narrator: %d %s (code %d): %s", e.StatusCode, http.StatusText(e.StatusCode), e.Code, e.Message)
}

// newError reads an error answer.
func newError(res *http.Response) error {
	e := &Error{StatusCode: res.StatusCode}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err == nil && json.Unmarshal(raw, &body) == nil && body.Code != nil && body.Message != nil {
		e.Code, e.Message = *body.Code, *body.Message
	} else {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsUnauthorized reports whether err is a 401 answer: the API key is
// missing, unknown or revoked.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsConflict reports whether err is a 409 answer.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == status
}
