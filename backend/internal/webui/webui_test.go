package webui_test

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agents-os/agents/backend/internal/webui"
)

const (
	indexHTML = `<!doctype html><div id="root"></div><script type="module" src="/assets/index-Bx1y2z.js"></script>`
	appJS     = `console.log("app")`
)

func testApp() fstest.MapFS {
	return fstest.MapFS{
		"index.html":              {Data: []byte(indexHTML)},
		"favicon.svg":             {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"assets/index-Bx1y2z.js":  {Data: []byte(appJS)},
		"assets/index-Q9w8e7.css": {Data: []byte(`body{}`)},
		".gitignore":              {Data: []byte("*\n")},
	}
}

func get(t *testing.T, h http.Handler, method, target string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mediaType drops the parameters of a Content-Type. Scripts may be
// text/javascript (Go's table) or application/javascript (the system's
// mime.types): browsers run both as modules.
func mediaType(ct string) string {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}

func TestHandlerServesFilesAndTheAppsPages(t *testing.T) {
	t.Parallel()
	h := webui.Handler(testApp())
	tests := []struct {
		name, method, path string
		status             int
		body               string
		contentType        string
		cache              string
	}{
		{"root", "GET", "/", 200, indexHTML, "text/html", "no-cache"},
		{"index by name", "GET", "/index.html", 200, indexHTML, "text/html", "no-cache"},
		{"deep link to a session", "GET", "/sessions/0b7c9b2e-52a4-4c7e-9d35-8f3c1c2d4e5f", 200, indexHTML, "text/html", "no-cache"},
		{"deep link to an agent", "GET", "/agents/assistant", 200, indexHTML, "text/html", "no-cache"},
		{"deep link with a query", "GET", "/sessions?agent=assistant", 200, indexHTML, "text/html", "no-cache"},
		{"hashed script", "GET", "/assets/index-Bx1y2z.js", 200, appJS, "text/javascript", "public, max-age=31536000, immutable"},
		{"hashed stylesheet", "GET", "/assets/index-Q9w8e7.css", 200, "body{}", "text/css", "public, max-age=31536000, immutable"},
		{"unhashed file", "GET", "/favicon.svg", 200, `<svg xmlns="http://www.w3.org/2000/svg"/>`, "image/svg+xml", "no-cache"},
		{"head of a page", "HEAD", "/sessions/x", 200, "", "text/html", "no-cache"},
		{"head of an asset", "HEAD", "/assets/index-Bx1y2z.js", 200, "", "text/javascript", "public, max-age=31536000, immutable"},
		{"unknown asset", "GET", "/assets/index-gone.js", 404, "", "", ""},
		{"unknown file with an extension", "GET", "/robots.txt", 404, "", "", ""},
		{"dot file", "GET", "/.gitignore", 404, "", "", ""},
		{"dot segment in a page path", "GET", "/.git/config", 404, "", "", ""},
		{"escape attempt", "GET", "/../webui.go", 404, "", "", ""},
		{"post", "POST", "/sessions/x", 405, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := get(t, h, tt.method, tt.path)
			got := body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (body %q)", res.StatusCode, tt.status, got)
			}
			if tt.status != 200 {
				if cc := res.Header.Get("Cache-Control"); cc != "" {
					t.Errorf("Cache-Control %q on a %d: an error must not be cached", cc, tt.status)
				}
				return
			}
			if tt.method == "GET" && got != tt.body {
				t.Errorf("body %q, want %q", got, tt.body)
			}
			if tt.method == "HEAD" && got != "" {
				t.Errorf("HEAD answered a body %q", got)
			}
			if ct := mediaType(res.Header.Get("Content-Type")); ct != tt.contentType && !(tt.contentType == "text/javascript" && ct == "application/javascript") {
				t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
			}
			if cc := res.Header.Get("Cache-Control"); cc != tt.cache {
				t.Errorf("Cache-Control %q, want %q", cc, tt.cache)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", res.Header.Get("X-Content-Type-Options"))
			}
		})
	}
}

func TestIndexIsRevalidatedByItsETag(t *testing.T) {
	t.Parallel()
	h := webui.Handler(testApp())
	first := get(t, h, "GET", "/sessions/x")
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("index.html has no ETag")
	}
	if again := get(t, h, "GET", "/", "If-None-Match", etag); again.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidating with the same ETag: status %d, want 304", again.StatusCode)
	}
	changed := testApp()
	changed["index.html"] = &fstest.MapFile{Data: []byte(indexHTML + "<!-- new build -->")}
	if res := get(t, webui.Handler(changed), "GET", "/", "If-None-Match", etag); res.StatusCode != http.StatusOK {
		t.Fatalf("revalidating after a new build: status %d, want 200", res.StatusCode)
	}
}

func TestEmbeddedHasAnIndex(t *testing.T) {
	t.Parallel()
	// Built or not, the binary answers / with a page: the app, or the
	// placeholder that says how to build it.
	res := get(t, webui.Handler(webui.Embedded()), "GET", "/")
	if got := body(t, res); res.StatusCode != 200 || !strings.Contains(got, `id="root"`) {
		t.Fatalf("embedded /: status %d, body %q", res.StatusCode, got)
	}
	if res := get(t, webui.Handler(webui.Embedded()), "GET", "/.gitignore"); res.StatusCode != 404 {
		t.Fatalf("embedded /.gitignore: status %d, want 404", res.StatusCode)
	}
}

func TestDirServesAFolderAsItChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := webui.Dir(dir); err == nil {
		t.Fatal("Dir accepted a folder without index.html")
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", "first build")
	write("assets/app-1.js", appJS)
	app, err := webui.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := webui.Handler(app)
	if got := body(t, get(t, h, "GET", "/agents/assistant")); got != "first build" {
		t.Fatalf("deep link: %q", got)
	}
	if res := get(t, h, "GET", "/assets/app-1.js"); res.StatusCode != 200 || body(t, res) != appJS {
		t.Fatalf("asset: status %d", res.StatusCode)
	}
	write("index.html", "second build")
	if got := body(t, get(t, h, "GET", "/")); got != "second build" {
		t.Fatalf("after a rebuild: %q", got)
	}
}

// TestHandlerSetsAStrictContentPolicy: the app's pages run only the
// app's own scripts and styles, load images only from itself, inline or
// over https (the user asks for each remote one), talk only to their own
// origin, and cannot be framed: a page framing the app could lay its own
// buttons over the approval form.
func TestHandlerSetsAStrictContentPolicy(t *testing.T) {
	t.Parallel()
	h := webui.Handler(testApp())
	want := map[string]string{
		"default-src":     "'none'",
		"script-src":      "'self'",
		"style-src":       "'self'",
		"img-src":         "'self' data: blob: https:",
		"font-src":        "'self'",
		"connect-src":     "'self'",
		"manifest-src":    "'self'",
		"base-uri":        "'none'",
		"form-action":     "'none'",
		"frame-ancestors": "'none'",
		"object-src":      "'none'",
	}
	for _, target := range []string{"/", "/sessions/x", "/assets/index-Bx1y2z.js", "/favicon.svg", "/assets/index-gone.js"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			res := get(t, h, "GET", target)
			csp := res.Header.Get("Content-Security-Policy")
			got := map[string]string{}
			for _, d := range strings.Split(csp, ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				if name == "" {
					continue
				}
				if _, dup := got[name]; dup {
					t.Errorf("directive %s given twice in %q", name, csp)
				}
				got[name] = value
			}
			for name, value := range want {
				if got[name] != value {
					t.Errorf("%s %q, want %q (policy %q)", name, got[name], value, csp)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("unexpected directive %s %q", name, got[name])
				}
			}
			if xfo := res.Header.Get("X-Frame-Options"); xfo != "DENY" {
				t.Errorf("X-Frame-Options %q, want DENY", xfo)
			}
			if rp := res.Header.Get("Referrer-Policy"); rp != "no-referrer" {
				t.Errorf("Referrer-Policy %q, want no-referrer", rp)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", res.Header.Get("X-Content-Type-Options"))
			}
		})
	}
}
