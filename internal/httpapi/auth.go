package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
)

// call is one authenticated API request.
type call struct {
	params    *params
	accountID int64
	// project is the path's project, found with the key; nil on paths
	// without a project_id.
	project *narrator.Project
}

// authed resolves the request's API key to an account, then reads the
// request's parameters, before calling h. Keys are looked up by hash and
// never logged. A key in the query or the headers is checked before the
// body is read, so that a request with a wrong key answers 401 without its
// body being read, however large. Only a request with no key there has its
// body read for one (the v3 api_key parameter), up to the body limit; a
// larger body, whose key cannot be read, answers 401 unread. On a path
// with a project_id, the key and the project are resolved together, in
// one read of the store; an id that is not a number still has its key
// checked first, so that a bad key always answers 401.
func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, c *call) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var p *params
		query := r.URL.Query()
		key := outerAPIKey(r, query)
		if key == "" {
			if r.ContentLength > s.maxBody {
				return errNoKey()
			}
			var err error
			if p, err = readParams(r, query, s.maxBody); err != nil {
				if narrator.ErrorCode(err) == narrator.ETOOLARGE {
					return errNoKey()
				}
				return err
			}
			if key = p.bodyAPIKey(); key == "" {
				return errNoKey()
			}
		}
		c, err := s.authenticate(r, key)
		if err != nil {
			return err
		}
		if p == nil {
			if p, err = readParams(r, query, s.maxBody); err != nil {
				return err
			}
		}
		c.params = p
		return h(w, r, c)
	}
}

func errNoKey() error { return narrator.Errorf(narrator.EUNAUTHORIZED, "no API key") }

// authenticate resolves key to its account and, on a path with a
// project_id, to the project.
func (s *Server) authenticate(r *http.Request, key string) (*call, error) {
	hash := narrator.HashAPIKey(key)
	if r.PathValue("project_id") != "" {
		if id, err := pathID(r, "project_id"); err == nil {
			project, err := s.store.AuthorizeProject(r.Context(), hash, id)
			if err != nil {
				return nil, err
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
