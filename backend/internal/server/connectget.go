package server

import (
	"encoding/base64"
	"net/http"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/backend/internal/errs"
)

// checkGetMessage refuses a Connect GET request whose base64 message does
// not decode, before the Connect handler reads it: connect-go reads the
// message through a base64 decoder and reports the decoder's failure as
// unknown (HTTP 500), which would make a client's mistake a server error.
// The decoding is the protocol's: URL-safe base64, padded or not.
func checkGetMessage(next http.Handler) http.Handler {
	errorWriter := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if q := r.URL.Query(); q.Get("base64") == "1" && !isQueryBase64(q.Get("message")) {
				err := errs.Invalid(errs.CodeInvalidArgument, "message: the query parameter is not URL-safe base64")
				ce := connectError(r.Context(), err)
				noteError(r.Context(), connect.CodeOf(ce).String(), err)
				_ = errorWriter.Write(w, r, ce)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isQueryBase64 reports whether s decodes the way connect-go decodes a
// base64 message: unpadded unless its length is a multiple of four.
func isQueryBase64(s string) bool {
	enc := base64.URLEncoding
	if len(s)%4 != 0 {
		enc = base64.RawURLEncoding
	}
	_, err := enc.DecodeString(s)
	return err == nil
}
