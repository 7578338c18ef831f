package server

import (
	"errors"
	"net/http"
	"slices"

	connectcors "connectrpc.com/cors"
	"github.com/rs/cors"
)

// corsMaxAge is how long a browser may cache a preflight answer, in
// seconds.
const corsMaxAge = 2 * 60 * 60

// withCORS lets the pages of the configured origins call the API from a
// browser: it answers preflight requests itself with 204 (before any
// guard or token check, as browsers send them without credentials) and
// adds the Access-Control headers to the other requests of those origins.
// Without origins there is nothing to allow and requests pass untouched.
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	allowed := make([]string, 0, len(origins))
	for _, o := range origins {
		allowed = append(allowed, normalizeOrigin(o))
	}
	c := cors.New(cors.Options{
		AllowedOrigins: allowed,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodDelete},
		AllowedHeaders: append(connectcors.AllowedHeaders(),
			"Authorization", "Last-Event-ID", "Connect-Accept-Encoding", "Connect-Content-Encoding"),
		ExposedHeaders: append(connectcors.ExposedHeaders(),
			"Location", replayHeader, "Connect-Content-Encoding", "Content-Encoding"),
		MaxAge:               corsMaxAge,
		OptionsSuccessStatus: http.StatusNoContent,
	})
	return c.Handler(next)
}

// checkCORSOrigins refuses "*" on a server with tokens: any page could
// then use a token it got hold of, and wildcard origins are meant for
// open, local development servers.
func checkCORSOrigins(origins []string, auth bool) error {
	if auth && slices.Contains(origins, "*") {
		return errors.New(`--cors-origin "*" is only allowed without --auth-tokens; list the origins`)
	}
	return nil
}
