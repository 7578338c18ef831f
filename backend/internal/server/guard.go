package server

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/agents-os/agents/backend/internal/errs"
)

// guardBrowsers refuses, when the server has no tokens, the requests a web
// page could make a browser send on its behalf. A Host that is neither
// loopback nor configured means the name the browser resolved is not this
// server's (DNS rebinding: evil.example resolving to 127.0.0.1); an Origin
// that is neither loopback nor allowed means a foreign page is calling.
// Requests without an Origin (curl, the Go client) only need a good Host.
func (s *Server) guardBrowsers(next http.Handler) http.Handler {
	hosts := map[string]bool{}
	for _, h := range s.security.AllowedHosts {
		hosts[strings.ToLower(hostOnly(h))] = true
	}
	origins := map[string]bool{}
	anyOrigin := false
	for _, o := range s.security.CORSOrigins {
		if o == "*" {
			anyOrigin = true
		}
		origins[normalizeOrigin(o)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(hostOnly(r.Host))
		if !isLoopbackName(host) && !hosts[host] {
			s.writeError(w, r, errs.PermissionDenied(errs.CodeHostNotAllowed, "host %q is not allowed: without auth tokens the server answers loopback names and --allowed-host only", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !anyOrigin && !origins[normalizeOrigin(origin)] && !isLoopbackOrigin(origin) && !isOwnOrigin(origin, r.Host) {
			s.writeError(w, r, errs.PermissionDenied(errs.CodeOriginNotAllowed, "origin %q is not allowed: add it with --cors-origin", origin))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isOwnOrigin reports whether a page calls from the very host (and port)
// the request was sent to, which the Host check has allowed: the web app
// the server serves.
func isOwnOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// hostOnly strips the port of a host[:port] (also [v6]:port).
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// isLoopbackName reports whether host names this machine only: localhost
// (and its subdomains, which resolvers keep on loopback) or a loopback IP.
func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	// As net.ParseIP reads it (no zone), without the slice it makes:
	// every request's Host is asked.
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// isLoopbackOrigin reports whether an Origin is a page served from this
// machine.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackName(strings.ToLower(u.Hostname()))
}

// normalizeOrigin lowercases an origin and drops a trailing slash, so that
// --cors-origin https://App.example/ matches the browser's
// https://app.example.
func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// IsLoopbackAddr reports whether a bind address listens on loopback only.
// An empty host (all interfaces) is not loopback.
func IsLoopbackAddr(bind string) bool {
	host := strings.ToLower(hostOnly(bind))
	if host == "" {
		return false
	}
	return isLoopbackName(host)
}
