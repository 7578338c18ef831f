package luatool

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxBody bounds a response body a script reads, under its string
// bound.
const maxBody = 8 << 20

// httpModule: requests to the toolbox's allowed hosts only (none when
// the list is empty), each within the script's time limit.
//
//	http.get(url [, {headers = {…}}]) → {status = 200, headers = {…}, body = "…"}
//	http.post(url, body [, {headers = {…}}])
//	http.request(method, url [, {headers = {…}, body = "…"}]), or http.request{method = …, url = …, …}
//
// A host not allowed raises an error; a request that fails returns nil
// and why.
func (r *run) httpModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"get": func(L *lua.LState) int {
			return r.request(L, "GET", L.CheckString(1), "", L.OptTable(2, nil))
		},
		"post": func(L *lua.LState) int {
			return r.request(L, "POST", L.CheckString(1), L.OptString(2, ""), L.OptTable(3, nil))
		},
		"request": func(L *lua.LState) int {
			if opts, ok := L.Get(1).(*lua.LTable); ok {
				return r.request(L, strings.ToUpper(lua.LVAsString(opts.RawGetString("method"))), lua.LVAsString(opts.RawGetString("url")),
					lua.LVAsString(opts.RawGetString("body")), opts)
			}
			opts := L.OptTable(3, nil)
			body := ""
			if opts != nil {
				body = lua.LVAsString(opts.RawGetString("body"))
			}
			return r.request(L, strings.ToUpper(L.CheckString(1)), L.CheckString(2), body, opts)
		},
	})
}

func (r *run) request(L *lua.LState, method, rawURL, body string, opts *lua.LTable) int {
	if method == "" {
		method = "GET"
	}
	if err := r.hostAllowed(rawURL); err != nil {
		L.RaiseError("sandbox: %v", err)
	}
	req, err := http.NewRequestWithContext(r.ctx, method, rawURL, strings.NewReader(body))
	if err != nil {
		return failed(L, err)
	}
	if opts != nil {
		if headers, ok := opts.RawGetString("headers").(*lua.LTable); ok {
			headers.ForEach(func(k, v lua.LValue) { req.Header.Set(k.String(), v.String()) })
		}
	}
	client := &http.Client{CheckRedirect: func(next *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return r.hostAllowed(next.URL.String())
	}}
	resp, err := client.Do(req)
	if err != nil {
		return failed(L, err)
	}
	defer resp.Body.Close()
	limit := min(maxBody, r.maxString)
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return failed(L, err)
	}
	if len(data) > limit {
		L.RaiseError("http: the response body is over %d bytes", limit)
	}
	t := L.NewTable()
	t.RawSetString("status", lua.LNumber(resp.StatusCode))
	headers := L.NewTable()
	for k, v := range resp.Header {
		headers.RawSetString(strings.ToLower(k), lua.LString(strings.Join(v, ", ")))
	}
	t.RawSetString("headers", headers)
	t.RawSetString("body", lua.LString(data))
	L.Push(t)
	return 1
}

// hostAllowed says why the toolbox may not reach rawURL, if it may not:
// it must be http or https, and its host one of the allowed (a host
// written with a port allows that port only).
func (r *run) hostAllowed(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %v", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs are fetched, not %q", rawURL)
	}
	allowed := r.toolbox.box.Lua.AllowedHosts
	if len(allowed) == 0 {
		return fmt.Errorf("host %q is not allowed: the toolbox allows no host", u.Hostname())
	}
	host := strings.ToLower(u.Hostname())
	if slices.ContainsFunc(allowed, func(h string) bool {
		h = strings.ToLower(h)
		return h == host || h == strings.ToLower(u.Host)
	}) {
		return nil
	}
	return fmt.Errorf("host %q is not allowed (allowed: %s)", u.Hostname(), strings.Join(allowed, ", "))
}

// failed returns nil and why.
func failed(L *lua.LState, err error) int {
	L.Push(lua.LNil)
	L.Push(lua.LString(err.Error()))
	return 2
}
