package openapitool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/confine"
	"github.com/agents-os/agents/backend/internal/tool"
)

// Limits of a toolbox's traffic.
const (
	// SpecTimeout bounds the fetch of a description.
	SpecTimeout = 30 * time.Second
	// CallTimeout bounds one call, from the request to the last byte of
	// the answer.
	CallTimeout = 60 * time.Second
	// maxSpecBytes is the largest description read.
	maxSpecBytes = 16 << 20
	// maxBodyBytes is the most of an answer read; more is not read.
	maxBodyBytes = 8 << 20
	// maxResultBytes is as much of an answer as the model reads, as much
	// as of a bash tool's output.
	maxResultBytes = bashtool.DefaultMaxStdout
)

// Options are what every toolbox gets from the server.
type Options struct {
	// Key looks a key id up in the server's key store; nil: the server
	// holds no keys.
	Key func(id string) (string, bool)
	// Client sends the requests; nil: a client of this package's own.
	Client *http.Client
	// Stored says the toolbox is a stored agent's, whose description file
	// must lie under Within (none: no file at all).
	Stored bool
	Within []string
}

// toolbox is one loaded toolbox, shared by its tools.
type toolbox struct {
	decl   agentfile.APIToolbox
	name   string
	base   *url.URL
	creds  *credentials
	client *http.Client
}

// Load reads a toolbox's description and returns its tools, in the order
// the description gives the operations, those the filter keeps. A
// description that cannot be read, or a secret that cannot, is an error
// naming the toolbox; the agent goes without its tools.
func Load(ctx context.Context, decl agentfile.APIToolbox, opts Options) ([]tool.Tool, error) {
	creds, err := resolveCredentials(decl, opts.Key)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(decl.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", decl.BaseURL, err)
	}
	b := &toolbox{decl: decl, name: boxName(decl), base: base, creds: creds, client: opts.Client}
	if b.client == nil {
		b.client = newClient()
	}
	data, err := b.fetchSpec(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("description %s: %s", decl.SpecURL, redact(err.Error(), creds.static()))
	}
	ops, err := parseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("description %s: %w", decl.SpecURL, err)
	}
	var tools []tool.Tool
	switch decl.Kind {
	case agentfile.APIPostgREST:
		tools = b.postgrestTools(ops)
	default:
		tools = b.openAPITools(ops)
	}
	return tools, nil
}

// newClient is a client that follows a redirect only within the host it
// was sent to: the credentials go with a request's headers, and another
// host must not receive them.
func newClient() *http.Client {
	return &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// fetchSpec reads the description: over HTTP, with the credentials known
// without a session, or from its file.
func (b *toolbox) fetchSpec(ctx context.Context, opts Options) ([]byte, error) {
	if b.decl.SpecIsFile {
		path := b.decl.Spec
		if opts.Stored {
			if len(opts.Within) == 0 {
				return nil, errors.New("a stored agent reads no file of the server unless it allows directories for them (agents serve --stored-agent-tool-dirs), and this one allows none")
			}
			if why := confine.Outside(path, opts.Within); why != "" {
				return nil, fmt.Errorf("%s is not under a directory this server allows for stored agents", path)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, unwrapPath(err)
		}
		defer f.Close()
		return readLimited(f, maxSpecBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, SpecTimeout)
	defer cancel()
	u, err := url.Parse(b.decl.Spec)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if _, err := b.creds.apply(req.Header, q, false, nil); err != nil {
		return nil, err
	}
	req.URL.RawQuery = q.Encode()
	req.Header.Set("Accept", "application/json, application/openapi+json, */*")
	res, err := b.client.Do(req)
	if err != nil {
		return nil, sendError(err, SpecTimeout)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, fmt.Errorf("answered HTTP %d", res.StatusCode)
	}
	return readLimited(res.Body, maxSpecBytes)
}

func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d MiB", limit>>20)
	}
	return data, nil
}

// sendError says why a request got no answer, without its URL, whose
// query may carry a secret.
func sendError(err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("no answer within %s", timeout)
		}
		return ue.Err
	}
	return err
}

// keep reports whether the toolbox's filter keeps an endpoint.
func (b *toolbox) keep(op *operation, table string) bool {
	return b.decl.Filter == nil || matches(b.decl.Filter, op, table)
}

// describe is a tool's description: the toolbox's description, the
// operation's summary and description, and its method and path.
func (b *toolbox) describe(op *operation, lines ...string) string {
	var parts []string
	if b.decl.Description != "" {
		parts = append(parts, b.decl.Description)
	}
	parts = append(parts, lines...)
	parts = append(parts, op.Method+" "+op.Path)
	return strings.Join(parts, "\n")
}
