package openapitool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/tool"
)

// request is one call's HTTP request before credentials: what the
// model's arguments give.
type request struct {
	method string
	path   string // the operation's path, its parameters substituted and escaped
	query  url.Values
	header http.Header
	body   json.RawMessage // nil: none
}

// send adds the toolbox's credentials to req, sends it and answers with
// "HTTP <status>" and the body, cut to what the model reads. An error
// status is a tool error; so is a request that gets no answer. No
// secret the request carried shows in the answer.
func (b *toolbox) send(ctx context.Context, call tool.Call, req request) tool.Result {
	secrets := b.creds.static()
	var err error
	fail := func(format string, args ...any) tool.Result {
		return tool.Failed(redact(fmt.Sprintf(format, args...), secrets))
	}
	u := *b.base
	u.RawPath = strings.TrimRight(b.base.EscapedPath(), "/") + req.path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return fail("%s %s: %v", req.method, req.path, err)
	}
	q := u.Query()
	for k, vs := range req.query {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	h := req.header
	if h == nil {
		h = http.Header{}
	}
	var sent []string
	sent, err = b.creds.apply(h, q, true, call.Session.Params)
	secrets = append(secrets, sent...)
	if err != nil {
		return fail("%s %s: %v", req.method, req.path, err)
	}
	u.RawQuery = q.Encode()

	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return fail("%s %s: %v", req.method, req.path, err)
	}
	hr.Header = h
	if req.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	res, err := b.client.Do(hr)
	if err != nil {
		return fail("%s %s: %v", req.method, req.path, sendError(err, CallTimeout))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxBodyBytes+1))
	if err != nil {
		return fail("%s %s: HTTP %d, then the answer broke off: %v", req.method, req.path, res.StatusCode, sendError(err, CallTimeout))
	}
	var text string
	switch {
	case req.method == http.MethodHead:
		text = fmt.Sprintf("HTTP %d (HEAD request - no body)", res.StatusCode)
	case len(data) > maxBodyBytes:
		text = bashtool.Cut(redact(fmt.Sprintf("HTTP %d\n%s", res.StatusCode, data[:maxBodyBytes]), secrets), maxResultBytes) +
			fmt.Sprintf("\n[the answer is longer than %d MiB; the rest was not read]", maxBodyBytes>>20)
	default:
		text = bashtool.Cut(redact(fmt.Sprintf("HTTP %d\n%s", res.StatusCode, data), secrets), maxResultBytes)
	}
	if res.StatusCode >= 400 {
		return tool.Failed(text)
	}
	return tool.OK(text)
}

// fillPath substitutes the path parameters of a template, each value
// escaped as one segment. A value that would climb out of the
// operation's path ("..") is refused.
func fillPath(template string, values map[string]string) (string, error) {
	out := template
	for name, v := range values {
		if v == "" || v == "." || v == ".." {
			return "", fmt.Errorf("the path parameter %s may not be %q", name, v)
		}
		out = strings.ReplaceAll(out, "{"+name+"}", url.PathEscape(v))
	}
	if i := strings.Index(out, "{"); i >= 0 && strings.Contains(out[i:], "}") {
		return "", fmt.Errorf("the path %s needs a value for %s", template, out[i:i+strings.Index(out[i:], "}")+1])
	}
	return out, nil
}

// argText is an argument as it goes in a path, a query or a header: a
// string's text, another value's JSON.
func argText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// queryValues are an argument's query values: one per element of a list
// (the form style OpenAPI takes by default), else the one.
func queryValues(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, item := range list {
			out = append(out, argText(item))
		}
		return out
	}
	return []string{argText(raw)}
}

// isNull reports a JSON null: an optional value left out.
func isNull(raw json.RawMessage) bool {
	return strings.TrimSpace(string(raw)) == "null"
}
