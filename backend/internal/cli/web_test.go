package cli

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

func getBody(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

func TestServeServesTheBuiltInWebApp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "web.json")
	writeFile(t, agent, agentJSON("web", ""), 0o644)
	p := startServe(t, dir, "--agent-file", agent, "--db", filepath.Join(dir, "agents.db"))

	// Built or not, the binary answers the app's pages: the app itself,
	// or the placeholder saying how to build it.
	status, header, body := getBody(t, p.url+"/sessions/0b7c9b2e-52a4-4c7e-9d35-8f3c1c2d4e5f")
	if status != 200 || !strings.Contains(body, `id="root"`) || header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("deep link: status %d, Cache-Control %q, body %q", status, header.Get("Cache-Control"), body)
	}
	if status, _, body := getBody(t, p.url+"/v1/agents"); status != 200 || !strings.Contains(body, `"slug":"web"`) {
		t.Fatalf("GET /v1/agents: status %d, body %q", status, body)
	}
}

func TestServeWebDirServesAFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "web.json")
	writeFile(t, agent, agentJSON("web", ""), 0o644)
	web := filepath.Join(dir, "dist")
	writeFile(t, filepath.Join(web, "index.html"), `<div id="root">development build</div>`, 0o644)
	writeFile(t, filepath.Join(web, "assets", "index-D3v.js"), `console.log("dev")`, 0o644)
	p := startServe(t, dir, "--agent-file", agent, "--db", filepath.Join(dir, "agents.db"), "--web-dir", web)

	if status, _, body := getBody(t, p.url+"/agents/web"); status != 200 || !strings.Contains(body, "development build") {
		t.Fatalf("deep link: status %d, body %q", status, body)
	}
	status, header, body := getBody(t, p.url+"/assets/index-D3v.js")
	if status != 200 || body != `console.log("dev")` || header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("asset: status %d, Cache-Control %q, body %q", status, header.Get("Cache-Control"), body)
	}
	// A rebuild shows on the next load.
	writeFile(t, filepath.Join(web, "index.html"), `<div id="root">rebuilt</div>`, 0o644)
	if _, _, body := getBody(t, p.url+"/"); !strings.Contains(body, "rebuilt") {
		t.Fatalf("after a rebuild: %q", body)
	}
}

func TestServeRefusesAWebDirWithoutAnApp(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	code, _, stderr := run(t, env, "serve", "--port", "0", "--web-dir", filepath.Join(dir, "nothing"))
	if code == 0 || !strings.Contains(stderr, "--web-dir") || !strings.Contains(stderr, "index.html") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
