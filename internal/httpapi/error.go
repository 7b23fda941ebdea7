package httpapi

import (
	"net/http"
	"strconv"

	"github.com/narrator/narrator"
)

// errMethod is a code local to the wire: the method does not apply to the path.
const errMethod = "method_not_allowed"

// errorBody is the v3 error response.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// errorTable maps narrator error codes to a status, a v3 numeric code and,
// where the original service used a fixed text, that message.
var errorTable = map[string]struct {
	status  int
	code    int
	message string
}{
	narrator.EINVALID:      {http.StatusBadRequest, 10, ""},
	narrator.ETOOLARGE:     {http.StatusRequestEntityTooLarge, 10, ""},
	narrator.ETIMEOUT:      {http.StatusRequestTimeout, 10, ""},
	errMethod:              {http.StatusMethodNotAllowed, 10, ""},
	narrator.EUNAUTHORIZED: {http.StatusUnauthorized, 20, "The authentication token was not recognised"},
	narrator.ENOTFOUND:     {http.StatusNotFound, 30, "Object not found"},
	narrator.ECONFLICT:     {http.StatusConflict, 40, ""},
	narrator.EQUEUEFULL:    {http.StatusTooManyRequests, 60, ""},
	narrator.EQUOTA:        {http.StatusForbidden, 61, ""},
	narrator.ERATELIMITED:  {http.StatusTooManyRequests, 60, ""},
	narrator.EUNREADABLE:   {http.StatusUnprocessableEntity, 10, ""},
	// The database or the media store cannot be reached for now: answered
	// with Retry-After (narrator.UnavailableRetryAfter).
	narrator.EUNAVAILABLE: {http.StatusServiceUnavailable, 50, ""},
	narrator.EINTERNAL:    {http.StatusInternalServerError, 50, "Internal error"},
}

// WriteError writes err as the v3 error body with the status of its code,
// for the service's other JSON edges (the embedded player's events), so
// that every JSON error looks the same. Internal error text never reaches
// the client.
func WriteError(w http.ResponseWriter, err error) { writeError(w, err) }

// writeError writes err as the v3 error body. Internal error text never
// reaches the client.
func writeError(w http.ResponseWriter, err error) {
	e, ok := errorTable[narrator.ErrorCode(err)]
	if !ok {
		e = errorTable[narrator.EINTERNAL]
	}
	msg := e.message
	if msg == "" {
		msg = narrator.ErrorMessage(err)
	}
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(narrator.UnavailableRetryAfter.Seconds())))
	}
	writeJSON(w, e.status, errorBody{Code: e.code, Message: msg})
}
