package narrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Error codes. They are stable: the HTTP layer maps each to a status and the
// v3 error body, and the dashboard maps them to messages.
const (
	EINVALID      = "invalid"      // the request is malformed or a field is wrong
	EUNAUTHORIZED = "unauthorized" // no valid credentials
	ENOTFOUND     = "not_found"    // the object does not exist or is not visible
	ECONFLICT     = "conflict"     // the object already exists or changed meanwhile
	ETOOLARGE     = "too_large"    // the request body is over the size limit
	ETIMEOUT      = "timeout"      // the client stopped sending its request before its end
	EUNAVAILABLE  = "unavailable"  // the service cannot do it now; try again later
	EINTERNAL     = "internal"     // anything else; its text is never shown to clients
)

// Error is an error whose code and message are safe to show to a client.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("narrator error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	default:
		return EINTERNAL
	}
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic message for any other error, so internal details never leak.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	default:
		return "Internal error."
	}
}

// Sentence returns msg, trimmed, as a sentence: its first letter upper-case and a full stop
// at its end. The dashboard and the player show ErrorMessage with it on their pages.
func Sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	first, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(first)) + msg[n:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// UnavailableRetryAfter is how long clients are told to wait (Retry-After)
// before they try again after an EUNAVAILABLE error.
const UnavailableRetryAfter = 5 * time.Second

// Contended returns err marked EUNAVAILABLE, as Unavailable does, for a
// write the database rolled back because it met concurrent ones (it broke
// a deadlock, or a serialization conflict): nothing of it was written, and
// the same request, made again, goes through.
func Contended(err error) error {
	return fmt.Errorf("%w: %w", &Error{Code: EUNAVAILABLE, Message: "The request met a concurrent change and was not applied; try again shortly."}, err)
}

// Unavailable returns err marked EUNAVAILABLE: ErrorCode reports that code
// and ErrorMessage a message safe for clients, while Error keeps err's text
// for the logs and errors.Is and errors.As still find err. Stores return it
// when their database cannot be reached: the server is down, the
// connection broke, the disk fails.
func Unavailable(err error) error {
	return fmt.Errorf("%w: %w", &Error{Code: EUNAVAILABLE, Message: "The service cannot reach its storage just now; try again shortly."}, err)
}

// VoiceFailed returns err marked as a fault of the voice labelled voice ("Tone (Female)"), not
// of the text it was given: an installed voice whose model fails when it runs. ErrorCode
// reports EINVALID, so that nothing tries again what cannot succeed, and ErrorMessage names
// the voice; Error keeps err's text for the logs.
func VoiceFailed(voice string, err error) error {
	return fmt.Errorf("%w: %w", &Error{Code: EINVALID, Message: fmt.Sprintf("the voice %s fails: its model cannot run. This is a fault of the voice, not of the text; choose another voice, or ask the operator to reinstall or remove it.", voice)}, err)
}

// BodyError returns the error that answers a request whose body could not
// be read, err being the read's error (other than the size limit, which
// the reader reports): ETIMEOUT when the body stopped arriving in time (a
// read deadline on the connection passed), EINVALID otherwise (the client
// closed the connection, or sent a malformed chunk). It is never an
// internal error: the fault is the client's. Reading a body that fails
// ends the request's context too, so a handler answers at once, without
// calling anything that takes that context.
func BodyError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", &Error{Code: ETIMEOUT, Message: "the request body did not arrive in time"}, err)
	}
	return fmt.Errorf("%w: %w", &Error{Code: EINVALID, Message: "could not read the request body"}, err)
}

// ClientGone returns err, or ETIMEOUT if err is internal only because ctx,
// a request's context, was cancelled under it: net/http cancels that
// context when reading the connection fails, as it does when the client
// stops sending its body or goes away, and neither is the server's fault.
// A client that stalled still reads the answer.
func ClientGone(ctx context.Context, err error) error {
	if ErrorCode(err) != EINTERNAL || !errors.Is(err, context.Canceled) || ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: %w", &Error{Code: ETIMEOUT, Message: "the request did not arrive whole in time"}, err)
}
