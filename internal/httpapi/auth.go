package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/narrator/narrator"
)

// call is one authenticated API request.
type call struct {
	params    *params
	accountID int64
	// project is the path's project, found with the key; nil on paths
	// without a project_id. When keyHash is set, it holds only the
	// project's ID and account.
	project *narrator.Project
	// keyHash is set when the key was not read yet: it authorized the
	// path's project on this node before (knownKeys), and the handler's
	// store call must read it (Store.CreateAudioWithKey).
	keyHash []byte
}

// authed resolves the request's API key to an account, then reads the
// request's parameters, before calling h. Keys are looked up by hash and
// never logged. A key in the query or the headers is checked before the
// body is read, so that a request with a wrong key answers 401 without its
// body being read, however large. Only a request with no key there has its
// body read for one (the v3 api_key parameter): a body of KeyPeekBytes or
// less is read whole; of a larger one, only the first KeyPeekBytes are
// read before the key is checked, and the key must be among them. A body
// over the body limit answers 401 unread. On a path
// with a project_id, the key and the project are resolved together, in
// one read of the store; an id that is not a number still has its key
// checked first, so that a bad key always answers 401.
func (s *Server) authed(h callHandler) handlerFunc {
	return s.authedAs(false, h)
}

// callHandler answers an authenticated request, c, or returns the error
// to answer.
type callHandler func(w http.ResponseWriter, r *http.Request, c *call) error

// authedLate is authed for a handler that passes call.keyHash, when set,
// to its store call, which then reads the key: a key that authorized the
// path's project on this node before is not read before the handler, and
// the body is read before it is. authedAs owns the order of the errors:
// every error, of reading the parameters or of the handler, goes through
// keyFirst, so that a bad key answers 401 before any other error whatever
// the handler does (TestBadKeyFirst walks every route).
func (s *Server) authedLate(h callHandler) handlerFunc {
	return s.authedAs(true, h)
}

// authedAs is authed, or authedLate if late.
func (s *Server) authedAs(late bool, h callHandler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p *params
		query := r.URL.Query()
		key := outerAPIKey(r, query)
		if key == "" {
			if r.ContentLength > s.maxBody {
				return errNoKey()
			}
			head, whole, err := peekBody(r, KeyPeekBytes)
			if err != nil {
				return err
			}
			if !whole {
				// Only the head is read before the key is checked.
				key = headAPIKey(head, r.Header.Get("Content-Type"))
			} else if p, err = readParams(r, query, s.maxBody); err != nil {
				return err
			} else {
				key = p.bodyAPIKey()
			}
			if key == "" {
				return errNoKey()
			}
		}
		c, err := s.authenticate(r, key, late)
		if err != nil {
			return err
		}
		if p == nil {
			if p, err = readParams(r, query, s.maxBody); err != nil {
				return s.keyFirst(r.Context(), c, err)
			}
		}
		c.params = p
		if err := h(w, r, c); err != nil {
			// A key not read yet (authedLate) answers first.
			return s.keyFirst(r.Context(), c, err)
		}
		return nil
	}
}

func errNoKey() error { return narrator.Errorf(narrator.EUNAUTHORIZED, "no API key") }

// authenticate resolves key to its account and, on a path with a
// project_id, to the project. If late, a key that authorized the project
// on this node before is not read: the call carries its hash instead.
func (s *Server) authenticate(r *http.Request, key string, late bool) (*call, error) {
	hash := narrator.HashAPIKey(key)
	if r.PathValue("project_id") != "" {
		if id, err := pathID(r, "project_id"); err == nil {
			if late {
				if accountID, ok := s.known.account(hash, id); ok {
					return &call{accountID: accountID, project: &narrator.Project{ID: id, AccountID: accountID}, keyHash: hash}, nil
				}
			}
			project, err := s.store.AuthorizeProject(r.Context(), hash, id)
			if err != nil {
				return nil, err
			}
			if late {
				s.known.remember(hash, project)
			}
			return &call{accountID: project.AccountID, project: project}, nil
		}
	}
	accountID, err := s.store.AuthenticateAPIKey(r.Context(), hash)
	if err != nil {
		return nil, err
	}
	return &call{accountID: accountID}, nil
}

// peekBody reads the first max bytes of r's body, and puts them back in
// front of the rest. whole reports that they are the whole body.
func peekBody(r *http.Request, max int) (head []byte, whole bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true, nil
	}
	head, err = io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil {
		return nil, false, narrator.BodyError(err)
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	return head, len(head) <= max, nil
}

// headAPIKey finds the api_key parameter in head, the first bytes of a
// JSON or form body: among the top-level members of a JSON object, or the
// complete pairs of a form. It returns "" if the key is not there.
func headAPIKey(head []byte, contentType string) string {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "application/x-www-form-urlencoded" && !bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) {
		// The last pair may be cut short; the ones before it are whole.
		if i := bytes.LastIndexByte(head, '&'); i >= 0 {
			form, _ := url.ParseQuery(string(head[:i]))
			return strings.TrimSpace(form.Get("api_key"))
		}
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		name, ok := t.(string)
		if !ok {
			return "" // the object ended
		}
		if name == "api_key" {
			var k string
			if dec.Decode(&k) != nil {
				return ""
			}
			return strings.TrimSpace(k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
}
