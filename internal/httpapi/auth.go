package httpapi

import (
	"net/http"

	"github.com/narrator/narrator"
)

// call is one authenticated API request.
type call struct {
	params    *params
	accountID int64
}

// authed reads the request's parameters and resolves its API key to an
// account before calling h. Keys are looked up by hash and never logged.
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
		accountID, err := s.store.AuthenticateAPIKey(r.Context(), narrator.HashAPIKey(key))
		if err != nil {
			return err
		}
		return h(w, r, &call{params: p, accountID: accountID})
	}
}
