package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"unicode"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Tokens are the bearer tokens a server accepts, each acting as one owner.
// Only their SHA-256 digests are kept, so a token never sits in memory
// longer than the file read, and nothing can print one.
type Tokens struct {
	entries []tokenEntry
	// plain counts the entries the file gave as tokens, not digests.
	plain int
}

type tokenEntry struct {
	digest [sha256.Size]byte
	id     identity
}

// tokensDocument is the --auth-tokens file:
//
//	{"tokens": [{"token": "…" | "sha256": "hex", "owner": "…", "admin": false}]}
type tokensDocument struct {
	Tokens []struct {
		Token  *string `json:"token"`
		SHA256 *string `json:"sha256"`
		Owner  string  `json:"owner"`
		Admin  bool    `json:"admin"`
	} `json:"tokens"`
}

// LoadTokens reads an --auth-tokens file. Its errors name the file and
// the entry, never a token.
func LoadTokens(path string) (*Tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth tokens file: %w", err)
	}
	t, err := ParseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("auth tokens file %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens decodes the tokens document. Every entry needs an owner and
// exactly one of token and sha256; two entries may not share a token.
func ParseTokens(data []byte) (*Tokens, error) {
	var doc tokensDocument
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		// The decoder's message may quote the text near the error, which
		// can be a token: say only what the file must look like.
		return nil, fmt.Errorf(`must be {"tokens": [{"token" or "sha256", "owner", "admin"}]}`)
	}
	if len(doc.Tokens) == 0 {
		return nil, fmt.Errorf("tokens: at least one token is required")
	}
	t := &Tokens{}
	seen := map[[sha256.Size]byte]int{}
	for i, e := range doc.Tokens {
		field := func(name string) string { return fmt.Sprintf("tokens[%d].%s", i, name) }
		var digest [sha256.Size]byte
		switch {
		case e.Token != nil && e.SHA256 != nil:
			return nil, fmt.Errorf("tokens[%d]: give token or sha256, not both", i)
		case e.Token != nil:
			if len(*e.Token) < 16 {
				return nil, fmt.Errorf("%s: must be at least 16 characters", field("token"))
			}
			digest = sha256.Sum256([]byte(*e.Token))
			t.plain++
		case e.SHA256 != nil:
			b, err := hex.DecodeString(strings.TrimSpace(*e.SHA256))
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s: must be 64 hexadecimal digits", field("sha256"))
			}
			copy(digest[:], b)
		default:
			return nil, fmt.Errorf("tokens[%d]: token or sha256 is required", i)
		}
		if strings.TrimSpace(e.Owner) == "" {
			return nil, fmt.Errorf("%s: is required", field("owner"))
		}
		if strings.ContainsFunc(e.Owner, unicode.IsControl) {
			// Every client prints owners' names: an escape sequence in
			// one would drive the terminal that lists it.
			return nil, fmt.Errorf("%s: must not hold control characters", field("owner"))
		}
		if j, dup := seen[digest]; dup {
			return nil, fmt.Errorf("tokens[%d]: same token as tokens[%d]", i, j)
		}
		seen[digest] = i
		t.entries = append(t.entries, tokenEntry{digest: digest, id: identity{owner: e.Owner, admin: e.Admin}})
	}
	return t, nil
}

// Plain returns how many tokens the file holds as they are, not as
// digests: a file with none tells a reader nothing it could use.
func (t *Tokens) Plain() int { return t.plain }

// Len returns how many tokens there are.
func (t *Tokens) Len() int { return len(t.entries) }

// lookup finds the identity of a presented token. It compares the digest
// with every entry in constant time and never stops early, so the time it
// takes says nothing about which entry, if any, matched.
func (t *Tokens) lookup(token string) (identity, bool) {
	digest := sha256.Sum256([]byte(token))
	var found identity
	matched := 0
	for _, e := range t.entries {
		eq := subtle.ConstantTimeCompare(digest[:], e.digest[:])
		if eq == 1 {
			found = e.id
		}
		matched |= eq
	}
	return found, matched == 1
}

// authenticate sets the caller's identity: from the bearer token when the
// server has tokens, else the local owner. Public paths (health, the API
// description) pass without a token.
func (s *Server) authenticate(next http.Handler) http.Handler {
	tokens := s.security.Tokens
	refuse := s.refuser()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := identity{owner: LocalOwner, admin: true}
		if tokens != nil && !s.isPublic(r) {
			token, ok := bearerToken(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agents"`)
				refuse(w, r, errs.Unauthenticated(errs.CodeTokenRequired, "a bearer token is required"))
				return
			}
			if id, ok = tokens.lookup(token); !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agents", error="invalid_token"`)
				refuse(w, r, errs.Unauthenticated(errs.CodeInvalidToken, "the bearer token is not valid"))
				return
			}
		}
		serveAs(next, w, r, id)
	})
}

// refuser returns what answers a request refused before it reaches the
// mux. A gRPC or gRPC-Web call is answered in its protocol's own terms —
// HTTP 200 with grpc-status, the message and the machine code, which
// grpcurl and buf curl report as the call's status — rather than with an
// HTTP error status they report as a broken transport. Every other
// request, Connect's included, gets the JSON error with its status.
func (s *Server) refuser() func(w http.ResponseWriter, r *http.Request, err error) {
	grpcErrors := connect.NewErrorWriter()
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.writeError(w, r, err)
			return
		}
		ce := connectError(r.Context(), err)
		code := connect.CodeOf(ce)
		if !noteError(r.Context(), code.String(), err) {
			s.log.Log(r.Context(), levelOf(code), "rpc", "path", r.URL.Path, "code", code.String(), "error", err.Error())
		}
		_ = grpcErrors.Write(w, r, ce)
	}
}

// asLocal serves every request as the local owner, with every right: the
// Unix socket, which only its owning user can open.
func asLocal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveAs(next, w, r, identity{owner: LocalOwner, admin: true})
	})
}

func serveAs(next http.Handler, w http.ResponseWriter, r *http.Request, id identity) {
	st, r := withState(r)
	st.id, st.hasID = id, true
	if st.recorded {
		st.record.owner = id.owner
	}
	next.ServeHTTP(w, r)
}

// bearerToken reads the token of the Authorization header or, on the
// event streams only (EventSource cannot set headers), of ?access_token=.
func bearerToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return "", false
		}
		return strings.TrimSpace(token), true
	}
	if isEventStream(r) {
		if token := r.URL.Query().Get("access_token"); token != "" {
			return token, true
		}
	}
	return "", false
}

// isEventStream reports whether r asks for one of the SSE routes.
func isEventStream(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	if r.URL.Path == "/v1/events" {
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/sessions/")
	id, tail, _ := strings.Cut(rest, "/")
	return ok && id != "" && tail == "events"
}

// isPublic reports whether r may be served without a token: liveness,
// readiness, the API description, the metrics when so configured, and
// the web app's files (the app asks for a token itself).
func (s *Server) isPublic(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/openapi.json":
		return true
	case "/metrics":
		return s.security.PublicMetrics
	}
	return s.web != nil && !isAPIPath(r.URL.Path)
}
