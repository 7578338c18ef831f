// Package webui serves the web app: the files Vite builds into web/dist,
// embedded in the binary or read from a folder. The app routes its own
// pages (/sessions/ID, /agents/SLUG), so every path that names no file
// and has no extension answers index.html; the content-hashed assets
// under assets/ are cached for good, and index.html is revalidated on
// every load so a new build is picked up at once.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// indexFile is the app's entry page.
const indexFile = "index.html"

// Cache policies: Vite names the files under assets/ by a hash of their
// content, so a name never changes meaning; any other file keeps its name
// across builds and must be revalidated.
const (
	cacheForever    = "public, max-age=31536000, immutable"
	cacheRevalidate = "no-cache"
)

// contentPolicy is the app's Content-Security-Policy. The build has no
// inline script or style, so the page runs only the app's own files and
// whatever a model's answer holds cannot run or restyle it even if it got
// past the app's sanitiser. Images may also be inline or come over https:
// the app shows a remote image only when the user asks for it (its
// address can carry what the model read to whoever serves it), and then
// the policy must let it load. The API is the page's own origin. No page
// may frame the app, so none can lay its own buttons over the approval
// form (frame-ancestors, and X-Frame-Options for older browsers).
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob: https:; font-src 'self'; connect-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// built is what `make build` copied from web/dist. The folder always
// exists (its .gitignore is committed), so a fresh clone compiles; all:
// keeps files whose names start with "_" or ".", which bundlers may emit
// (the handler never serves dot files).
//
//go:embed all:dist
var built embed.FS

// notBuilt stands in for the app in a binary built without it.
//
//go:embed placeholder
var notBuilt embed.FS

// Embedded returns the app built into the binary or, when it was built
// before the app, a page that says how to build it.
func Embedded() fs.FS {
	if dist, err := fs.Sub(built, "dist"); err == nil && hasIndex(dist) {
		return dist
	}
	placeholder, err := fs.Sub(notBuilt, "placeholder")
	if err != nil {
		panic(err) // the pattern is a literal: it cannot fail
	}
	return placeholder
}

// Dir returns the app in a folder (agents serve --web-dir). Files are read
// on each request, so a rebuild shows on the next load.
func Dir(dir string) (fs.FS, error) {
	if _, err := os.Stat(filepath.Join(dir, indexFile)); err != nil {
		return nil, fmt.Errorf("web app folder %s has no %s (build it with `npm run --workspace web build`): %w", dir, indexFile, err)
	}
	return os.DirFS(dir), nil
}

func hasIndex(app fs.FS) bool {
	info, err := fs.Stat(app, indexFile)
	return err == nil && info.Mode().IsRegular()
}

// Handler serves app for GET and HEAD. A path that names a file serves
// it; one whose last segment has no extension is a page of the app and
// serves index.html; anything else, and every path with a segment that
// starts with a dot, is 404. Every answer carries the app's security
// headers.
func Handler(app fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = indexFile
		}
		if hidden(name) {
			http.NotFound(w, r)
			return
		}
		if serveFile(w, r, app, name) {
			return
		}
		if path.Ext(name) == "" && serveFile(w, r, app, indexFile) {
			return
		}
		http.NotFound(w, r)
	})
}

// hidden reports whether a path has a segment starting with a dot
// (.gitignore, .env): such files are never part of the app.
func hidden(name string) bool {
	for seg := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// serveFile serves the regular file name of app with its cache policy and
// reports whether there was one. http.ServeContent answers HEAD, ranges
// and conditional requests, and takes the content type from the name.
func serveFile(w http.ResponseWriter, r *http.Request, app fs.FS, name string) bool {
	f, err := app.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	h := w.Header()
	if strings.HasPrefix(name, "assets/") {
		h.Set("Cache-Control", cacheForever)
		content, ok := f.(io.ReadSeeker)
		if !ok {
			data, err := io.ReadAll(f)
			if err != nil {
				return false
			}
			content = bytes.NewReader(data)
		}
		http.ServeContent(w, r, name, info.ModTime(), content)
		return true
	}
	// Revalidated files are small (index.html, an icon): read them whole
	// and tag them with their hash, so a reload that changed nothing is
	// answered 304 whatever the file's modification time.
	data, err := io.ReadAll(f)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(data)
	h.Set("Cache-Control", cacheRevalidate)
	h.Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	http.ServeContent(w, r, name, info.ModTime(), bytes.NewReader(data))
	return true
}
