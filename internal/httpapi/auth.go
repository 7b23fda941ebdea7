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

// authed reads the request's parameters and resolves its API key to an
// account before calling h. Keys are looked up by hash and never logged.
// On a path with a project_id, the key and the project are resolved
// together, in one read of the store; an id that is not a number still has
// its key checked first, so that a bad key always answers 401.
func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, c *call) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := readParams(r, s.maxBody)
		if err != nil {
			return err
		}
		key := p.apiKey(r)
		if key == "" {
			return narrator.Errorf(narrator.EUNAUTHORIZED, "no API key")
		}
		hash := narrator.HashAPIKey(key)
		if r.PathValue("project_id") != "" {
			if id, err := pathID(r, "project_id"); err == nil {
				project, err := s.store.AuthorizeProject(r.Context(), hash, id)
				if err != nil {
					return err
				}
				return h(w, r, &call{params: p, accountID: project.AccountID, project: project})
			}
		}
		accountID, err := s.store.AuthenticateAPIKey(r.Context(), hash)
		if err != nil {
			return err
		}
		return h(w, r, &call{params: p, accountID: accountID})
	}
}
