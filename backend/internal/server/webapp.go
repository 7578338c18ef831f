package server

import (
	"net/http"
	"strings"
)

// webPattern names the web app's requests in the request log and the
// metrics, as a mux pattern names an API route's.
const webPattern = "GET /"

// withWeb serves the web app, when there is one, for the GET and HEAD
// requests that no API route matches, and hands everything else to
// serveAPI. The app is not a pattern of the mux: a catch-all there would
// turn the mux's 405 for a wrong method into the app's answer, and a
// GET-only one conflicts with the Connect services, which match every
// method. isAPIPath keeps the API's namespaces (an unknown /v1/ route, a
// service that is not mounted, metrics or profiles that are off)
// answering 404 rather than the app.
func (s *Server) withWeb(api *http.ServeMux, serveAPI http.Handler) http.Handler {
	if s.web == nil {
		return serveAPI
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !isAPIPath(r.URL.Path) {
			if _, pattern := api.Handler(r); pattern == "" {
				if rec := recordOf(r.Context()); rec != nil {
					rec.pattern = webPattern
				}
				s.web.ServeHTTP(w, r)
				return
			}
		}
		serveAPI.ServeHTTP(w, r)
	})
}

// isAPIPath reports whether a path belongs to the API rather than to the
// web app.
func isAPIPath(p string) bool {
	switch p {
	case "/v1", "/openapi.json", "/healthz", "/readyz", "/metrics", "/mcp":
		return true
	}
	for _, prefix := range []string{"/v1/", "/agents.v1.", "/debug/", "/mcp/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}
