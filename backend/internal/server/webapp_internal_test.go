package server

import "testing"

// Every route of the API must be an API path: isPublic lets the web
// app's paths through without a token, so a route outside those names
// would be served without one.
func TestEveryRouteIsAnAPIPath(t *testing.T) {
	t.Parallel()
	for _, rt := range (&Server{}).routeTable() {
		if !isAPIPath(rt.path) {
			t.Errorf("%s %s is not an API path: add its prefix to isAPIPath", rt.method, rt.path)
		}
	}
	for _, p := range []string{"/", "/sessions/x", "/agents/boss", "/assets/index-1.js"} {
		if isAPIPath(p) {
			t.Errorf("%s is an API path, but it is the web app's", p)
		}
	}
}
