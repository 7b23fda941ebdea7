package httpapi

// RoutePatterns returns s's routes as ServeMux patterns, "METHOD /path",
// for the tests of package httpapi_test.
func RoutePatterns(s *Server) []string {
	var patterns []string
	for _, rt := range s.routeTable() {
		patterns = append(patterns, rt.method+" "+rt.path)
	}
	return patterns
}
