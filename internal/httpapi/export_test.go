package httpapi

import "net/http"

// RoutePatterns returns s's routes as ServeMux patterns, "METHOD /path",
// for the tests of package httpapi_test.
func RoutePatterns(s *Server) []string {
	var patterns []string
	for _, rt := range s.routeTable() {
		patterns = append(patterns, rt.method+" "+rt.path)
	}
	return patterns
}

// HandleJSON adds the route pattern to s, answering 200 with v through
// writeJSON, for the tests of package httpapi_test.
func HandleJSON(s *Server, pattern string, v any) {
	s.mux.Handle(pattern, s.handle(func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, v)
		return nil
	}))
}
