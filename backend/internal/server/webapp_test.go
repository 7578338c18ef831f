package server_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/webui"
	"github.com/agents-os/agents/tools/fakellm"
)

const (
	webIndex  = `<!doctype html><div id="root"></div><script type="module" src="/assets/index-C0ffee.js"></script>`
	webScript = `console.log("app")`
)

func withTestWeb() option {
	return withWeb(webui.Handler(fstest.MapFS{
		"index.html":             {Data: []byte(webIndex)},
		"assets/index-C0ffee.js": {Data: []byte(webScript)},
	}))
}

func TestWebAppIsServedBesideTheAPI(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{}, withTestWeb())
	const immutable = "public, max-age=31536000, immutable"
	tests := []struct {
		name     string
		req      request
		status   int
		body     string // the whole body, or a part of it after "…"
		cache    string
		jsonBody bool
	}{
		{"the app at the root", request{method: "GET", path: "/"}, 200, webIndex, "no-cache", false},
		{"a deep link to a session", request{method: "GET", path: "/sessions/0b7c9b2e-52a4-4c7e-9d35-8f3c1c2d4e5f"}, 200, webIndex, "no-cache", false},
		{"a deep link to an agent", request{method: "GET", path: "/agents/boss"}, 200, webIndex, "no-cache", false},
		{"HEAD of a deep link", request{method: "HEAD", path: "/sessions/x"}, 200, "", "no-cache", false},
		{"a hashed asset", request{method: "GET", path: "/assets/index-C0ffee.js"}, 200, webScript, immutable, false},
		{"an unknown asset", request{method: "GET", path: "/assets/index-gone.js"}, 404, "", "", false},
		{"a JSON route is not shadowed", request{method: "GET", path: "/v1/agents"}, 200, `…"slug":"boss"`, "", true},
		{"the JSON route of an agent is not shadowed", request{method: "GET", path: "/v1/agents/boss"}, 200, `…"slug":"boss"`, "", true},
		{"a Connect GET is not shadowed", request{method: "GET", path: "/agents.v1.AgentService/ListAgents?encoding=json&message={}"}, 200, `…"slug":"boss"`, "", true},
		{"the API description", request{method: "GET", path: "/openapi.json"}, 200, `…"openapi"`, "", true},
		{"health", request{method: "GET", path: "/healthz"}, 200, `…"ok"`, "no-store", true},
		{"an unknown JSON route is the API's 404", request{method: "GET", path: "/v1/nothing-here"}, 404, "", "", false},
		{"an unknown service is the API's 404", request{method: "GET", path: "/agents.v1.NoService/Nothing"}, 404, "", "", false},
		{"metrics that are off are a 404", request{method: "GET", path: "/metrics"}, 404, "", "", false},
		{"profiles that are off are a 404", request{method: "GET", path: "/debug/pprof/"}, 404, "", "", false},
		{"a wrong method on a route is still 405", request{method: "PUT", path: "/v1/sessions"}, 405, "", "", false},
		{"the app takes no POST", request{method: "POST", path: "/sessions/x", body: "{}"}, 404, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, header, body := e.send(tt.req)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.status != 200 {
				if strings.Contains(string(body), `id="root"`) {
					t.Fatalf("answered the app: %s", body)
				}
				return
			}
			switch want, part := strings.CutPrefix(tt.body, "…"); {
			case part && !strings.Contains(string(body), want):
				t.Errorf("body %s does not contain %s", body, want)
			case !part && string(body) != want:
				t.Errorf("body %q, want %q", body, want)
			}
			if got := strings.HasPrefix(header.Get("Content-Type"), "application/json"); got != tt.jsonBody {
				t.Errorf("Content-Type %q", header.Get("Content-Type"))
			}
			if tt.cache != "" && header.Get("Cache-Control") != tt.cache {
				t.Errorf("Cache-Control %q, want %q", header.Get("Cache-Control"), tt.cache)
			}
		})
	}
}

func TestWebAppIsPublicUnderAuth(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{}, withTestWeb(), withSecurity(server.Security{Tokens: testTokens(t)}))
	tests := []struct {
		name   string
		req    request
		status int
	}{
		{"the app loads without a token", request{method: "GET", path: "/sessions/x"}, 200},
		{"its assets load without a token", request{method: "GET", path: "/assets/index-C0ffee.js"}, 200},
		{"the API still needs a token", request{method: "GET", path: "/v1/agents"}, 401},
		{"an unknown API route still needs a token", request{method: "GET", path: "/v1/nothing-here"}, 401},
		{"a Connect call still needs a token", request{method: "GET", path: "/agents.v1.AgentService/ListAgents?encoding=json&message={}"}, 401},
		{"the API answers a token", request{method: "GET", path: "/v1/agents", header: bearer(aliceToken)}, 200},
		{"the app takes no POST, token or not", request{method: "POST", path: "/sessions/x", body: "{}"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if status, _, body := e.send(tt.req); status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
		})
	}
}

func TestWebAppKeepsTheBrowserGuards(t *testing.T) {
	t.Parallel()
	// Without tokens the page itself is refused to a foreign Host: a
	// rebinding page must not even load the app from this server.
	e := start(t, fakellm.Rules{}, withTestWeb())
	if status, _, body := e.send(request{method: "GET", path: "/", host: "evil.example"}); status != 403 {
		t.Fatalf("foreign Host: status %d, want 403: %s", status, body)
	}
}

func TestWithoutAWebAppTheRootIsNotFound(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{})
	if status, _, body := e.send(request{method: "GET", path: "/sessions/x"}); status != 404 {
		t.Fatalf("status %d, want 404: %s", status, body)
	}
}
