package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// client drives the server through its plain JSON routes
// (docs/protocol.md), as a script would.
type client struct {
	base string
	http *http.Client
	// postWait makes a prompt one request, a post with wait, instead of
	// a post and then a waiting GetSession.
	postWait bool
	// waitWhole has the waiting GetSession ask for the whole session
	// rather than the turns after the prompt's.
	waitWhole bool
}

// newClient returns a client that keeps up to conns connections open to
// the server, so concurrent workers do not dial for every request.
func newClient(base string, conns int) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	return &client{base: base, http: &http.Client{Transport: tr}}
}

func (c *client) close() { c.http.CloseIdleConnections() }

// Session statuses as the JSON routes write them.
const (
	statusReady   = "ready"
	statusRunning = "running"
)

type sessionMeta struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	TurnCount    int    `json:"turn_count"`
}

// apiError is the JSON routes' error body.
type apiError struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// do sends a request and decodes a 2xx answer into out (when not nil). It
// returns the size of the answer's body.
func (c *client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e apiError
		if json.Unmarshal(b, &e) == nil && e.Code != "" {
			return len(b), fmt.Errorf("%s %s: %d %s %s: %s", method, path, resp.StatusCode, e.Code, e.Reason, e.Message)
		}
		return len(b), fmt.Errorf("%s %s: %s: %.200s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return len(b), fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return len(b), nil
}

type message struct {
	Text string `json:"text"`
}

// create makes a session of the load agent. With text, its first prompt
// starts at once.
func (c *client) create(ctx context.Context, text string) (string, error) {
	in := struct {
		Agent   string   `json:"agent"`
		Message *message `json:"message,omitempty"`
	}{Agent: agentSlug}
	if text != "" {
		in.Message = &message{Text: text}
	}
	var out sessionMeta // the session, its summary at the top
	if _, err := c.do(ctx, "POST", "/v1/sessions", in, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return "", fmt.Errorf("POST /v1/sessions: no session id in the answer")
	}
	return out.ID, nil
}

// post posts a message that must start a run, and returns the index of
// its turn.
func (c *client) post(ctx context.Context, id, text string) (int, error) {
	var out struct {
		MailID string      `json:"mail_id"`
		Meta   sessionMeta `json:"session"` // the summary once the message was accepted
	}
	path := "/v1/sessions/" + id + "/messages"
	if _, err := c.do(ctx, "POST", path, message{Text: text}, &out); err != nil {
		return 0, err
	}
	if out.MailID != "" {
		return 0, fmt.Errorf("POST %s: the session was busy: the message became mail %s", path, out.MailID)
	}
	if out.Meta.TurnCount < 1 {
		return 0, fmt.Errorf("POST %s: no turn count in the answer", path)
	}
	return out.Meta.TurnCount - 1, nil
}

// waitTimeout is the long poll's own timeout; a run still going when it
// passes is waited for again.
const waitTimeout = 60 * time.Second

// wait long-polls a session until its run stopped, and fails unless it
// stopped ready. The answer carries the turns after afterTurn, unless
// afterTurn is negative: then every turn.
func (c *client) wait(ctx context.Context, id string, afterTurn int) (sessionMeta, error) {
	path := fmt.Sprintf("/v1/sessions/%s?wait=true&timeout=%s", id, waitTimeout)
	if afterTurn >= 0 {
		path += "&after_turn=" + strconv.Itoa(afterTurn)
	}
	for {
		var m sessionMeta // the session, its summary at the top
		if _, err := c.do(ctx, "GET", path, nil, &m); err != nil {
			return sessionMeta{}, err
		}
		switch m.Status {
		case statusRunning:
			continue
		case statusReady:
			return m, nil
		default:
			return m, fmt.Errorf("session %s stopped %s (%s), want ready", id, m.Status, m.StatusReason)
		}
	}
}

// prompt posts text and waits until the run it starts stopped.
func (c *client) prompt(ctx context.Context, id, text string) error {
	if c.postWait {
		return c.postAndWait(ctx, id, text)
	}
	turn, err := c.post(ctx, id, text)
	if err != nil {
		return err
	}
	if c.waitWhole {
		turn = -1
	}
	_, err = c.wait(ctx, id, turn)
	return err
}

// postAndWait posts text with wait: the answer comes once the run
// stopped. A run still going when the server answers (its timeout passed,
// or a server that does not wait) is waited for with GetSession.
func (c *client) postAndWait(ctx context.Context, id, text string) error {
	var out struct {
		MailID  string      `json:"mail_id"`
		Session sessionMeta `json:"session"`
	}
	path := fmt.Sprintf("/v1/sessions/%s/messages?wait=true&timeout=%s", id, waitTimeout)
	if _, err := c.do(ctx, "POST", path, message{Text: text}, &out); err != nil {
		return err
	}
	if out.MailID != "" {
		return fmt.Errorf("POST %s: the session was busy: the message became mail %s", path, out.MailID)
	}
	switch m := out.Session; m.Status {
	case statusReady:
		return nil
	case statusRunning, "":
		_, err := c.wait(ctx, id, -1)
		return err
	default:
		return fmt.Errorf("session %s stopped %s (%s), want ready", id, m.Status, m.StatusReason)
	}
}

// metrics reads the server's /metrics and returns the samples without
// labels (go_goroutines, go_memstats_heap_inuse_bytes, …).
func (c *client) metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return ParseMetrics(string(b)), nil
}
