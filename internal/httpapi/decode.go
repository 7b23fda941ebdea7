package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/narrator/narrator"
)

// params are a request's named parameters, gathered from the JSON or form
// body and the query string. The body wins over the query.
type params struct {
	json  map[string]json.RawMessage
	form  url.Values
	query url.Values
}

// KeyPeekBytes is how much of a request body is read, when the body may
// carry the API key, before the key is checked: a body of that size or
// less is read whole, and a larger one must carry its api_key within it.
const KeyPeekBytes = 64 << 10

// readParams reads and parses the request body, if any, beside query, the
// request's parsed query. The body is capped at max bytes; a larger one is
// refused before it is read whole.
func readParams(r *http.Request, query url.Values, max int64) (*params, error) {
	p := &params{query: query}
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return p, nil
	}
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(max)
		}
		return nil, narrator.BodyError(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return p, nil
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	// `curl -d '{...}'` labels JSON as a form: a body that opens like a
	// JSON object is read as one, whatever its label.
	looksJSON := bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
	switch {
	case mediaType == "application/x-www-form-urlencoded" && !looksJSON:
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, narrator.Errorf(narrator.EINVALID, "the form body is not valid: %v", err)
		}
		p.form = form
	default:
		// JSON is the default: many clients omit the content type.
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&p.json); err != nil || p.json == nil {
			return nil, narrator.Errorf(narrator.EINVALID, "the request body must be a JSON object")
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, narrator.Errorf(narrator.EINVALID, "the request body must hold a single JSON object")
		}
	}
	return p, nil
}

func tooLarge(max int64) error {
	return narrator.Errorf(narrator.ETOOLARGE, "the request body is larger than %d bytes", max)
}

// str returns a string parameter and whether it was given. A JSON null
// counts as not given. numbers allows JSON numbers, taken as their text.
func (p *params) str(name string, numbers bool) (string, bool, error) {
	if raw, ok := p.json[name]; ok {
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return "", false, narrator.Errorf(narrator.EINVALID, "%s is not valid JSON", name)
		}
		switch v := v.(type) {
		case nil:
			return "", false, nil
		case string:
			return v, true, nil
		case json.Number:
			if numbers {
				return v.String(), true, nil
			}
		}
		return "", false, narrator.Errorf(narrator.EINVALID, "%s must be a string", name)
	}
	if vs, ok := p.form[name]; ok {
		return vs[0], true, nil
	}
	if vs, ok := p.query[name]; ok {
		return vs[0], true, nil
	}
	return "", false, nil
}

// boolean returns a flag parameter: JSON true or false, or in forms and
// queries "true", "1", "false" or "0". Absent means false.
func (p *params) boolean(name string) (bool, error) {
	if raw, ok := p.json[name]; ok {
		var v *bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, narrator.Errorf(narrator.EINVALID, "%s must be true or false", name)
		}
		return v != nil && *v, nil
	}
	v, ok, _ := p.str(name, false)
	if !ok || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, narrator.Errorf(narrator.EINVALID, "%s must be true or false", name)
	}
	return b, nil
}

// metadata returns the metadata object and whether it was given. In forms it
// is sent as metadata[key]=value pairs.
func (p *params) metadata() (map[string]string, bool, error) {
	if raw, ok := p.json["metadata"]; ok {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, false, narrator.Errorf(narrator.EINVALID, "metadata is not valid JSON")
		}
		if v == nil {
			return nil, false, nil
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false, narrator.Errorf(narrator.EINVALID, "metadata must be an object of string values")
		}
		m := make(map[string]string, len(obj))
		for k, val := range obj {
			s, ok := val.(string)
			if !ok {
				return nil, false, narrator.Errorf(narrator.EINVALID, "metadata value of %q must be a string", k)
			}
			m[k] = s
		}
		return m, true, nil
	}
	var m map[string]string
	for k, vs := range p.form {
		if key, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(key, "]") {
			if m == nil {
				m = map[string]string{}
			}
			m[strings.TrimSuffix(key, "]")] = vs[0]
		}
	}
	return m, m != nil, nil
}

// outerAPIKey finds the API key outside the body: in query, the request's
// parsed query, or the Authorization or X-Api-Key headers, in that order.
func outerAPIKey(r *http.Request, query url.Values) string {
	if k := strings.TrimSpace(query.Get("api_key")); k != "" {
		return k
	}
	// The scheme name is case-insensitive (RFC 9110).
	if scheme, k, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(k) != "" {
		return strings.TrimSpace(k)
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
}

// bodyAPIKey returns the api_key parameter of the JSON or form body.
func (p *params) bodyAPIKey() string {
	if raw, ok := p.json["api_key"]; ok {
		var k string
		if json.Unmarshal(raw, &k) == nil {
			return strings.TrimSpace(k)
		}
		return ""
	}
	return strings.TrimSpace(p.form.Get("api_key"))
}

// pathID parses a numeric path parameter. Anything else names no object.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, narrator.Errorf(narrator.ENOTFOUND, "%s is not a known id", name)
	}
	return id, nil
}

// WriteJSON writes v as a JSON response with status, as the API does, for
// the service's other JSON edges. Like writeJSON it panics when v cannot be
// encoded, a programming error; outside the API's handlers net/http
// recovers that, logs it and drops the connection.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// writeList answers 200 with list as a JSON array of its items' wire forms, [] when it is
// empty.
func writeList[T any](w http.ResponseWriter, list []T, wire func(T) any) {
	out := make([]any, 0, len(list))
	for _, v := range list {
		out = append(out, wire(v))
	}
	writeJSON(w, http.StatusOK, out)
}

// writeJSON encodes v into a buffer first, so that nothing is sent when v
// cannot be encoded. That is a programming error (a NaN, a channel): it
// panics, and ServeHTTP logs it with the request and answers 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		panic(fmt.Errorf("encode %T as JSON: %w", v, err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
