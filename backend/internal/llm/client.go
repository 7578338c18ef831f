package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for the zero fields of Config.
const (
	DefaultMaxAttempts = 4
	DefaultBackoffBase = time.Second
	DefaultMaxDelay    = time.Minute
	DefaultMaxCallTime = 10 * time.Minute
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxOutputBytes is far more than any model writes in one
	// answer, and little enough to hold for each of many sessions at once.
	DefaultMaxOutputBytes = 4 << 20
)

const maxErrorBody = 64 << 10

// Limits bound what one model call may cost: the memory its answer holds
// and the time it takes. Zero fields take the defaults.
type Limits struct {
	// MaxOutputBytes caps one answer: its text, thinking and tool calls
	// (names, ids and arguments, plus a few bytes for each call) together.
	// The call fails with ErrOutputTooLarge as soon as the answer passes
	// it, and the connection is closed. The raw stream is bounded in
	// proportion: one event, or a whole non-streamed completion, may be
	// at most 6 times as long (JSON's worst escaping) plus 64 KiB.
	MaxOutputBytes int64
	// MaxCallTime bounds a whole call, retries and streaming included: a
	// provider that keeps talking never trips the idle timeout, so this is
	// what ends it. Past it the call fails with ErrCallTooLong.
	MaxCallTime time.Duration
}

// Config says where a Client sends its requests and how patient it is.
type Config struct {
	// BaseURL is the API root, as in agent files' modelUrl
	// ("https://api.openai.com/v1", "http://localhost:11434/v1");
	// "/chat/completions" is appended unless it is already there.
	BaseURL string
	// APIKey goes out as a bearer token; empty sends none (local servers).
	APIKey string
	Flavor Flavor
	// HTTPClient should have no Timeout of its own: MaxCallTime and
	// IdleTimeout bound the call. Nil uses a client whose transport keeps
	// an idle connection for each of many concurrent calls.
	HTTPClient *http.Client
	// MaxAttempts counts the first try.
	MaxAttempts int
	// BackoffBase is the wait before the first retry; it doubles for each
	// further one, up to MaxDelay.
	BackoffBase time.Duration
	// MaxDelay caps a wait between attempts. A provider asking (Retry-After)
	// for a longer wait gets no retry: its error goes back to the caller.
	MaxDelay time.Duration
	// Limits bound each call; their zero fields take the defaults too.
	Limits
	// IdleTimeout bounds the silence between two reads of the response,
	// including the wait for its first byte.
	IdleTimeout time.Duration
	// Logger hears about retries. Nil discards.
	Logger *slog.Logger
}

// String keeps the API key out of logs and error messages.
func (c Config) String() string {
	return fmt.Sprintf("llm.Config{BaseURL: %q, Flavor: %s, APIKey: %s}", c.BaseURL, c.Flavor, redacted(c.APIKey))
}

// GoString keeps the API key out of %#v.
func (c Config) GoString() string { return c.String() }

func redacted(secret string) string {
	if secret == "" {
		return `""`
	}
	return "[redacted]"
}

// Client calls one chat-completions endpoint. It is safe for concurrent use.
type Client struct {
	endpoint    string
	apiKey      string
	flavor      Flavor
	dialect     dialect
	http        *http.Client
	retry       retryPolicy
	maxCallTime time.Duration
	// callTooLong is the error of a call that took longer than maxCallTime.
	callTooLong    error
	maxOutputBytes int64
	idleTimeout    time.Duration
	// authorization is the Authorization header's value, nil without a key.
	authorization []string
	log           *slog.Logger
	// sleep waits between attempts; tests replace it to see the waits
	// without spending them.
	sleep func(context.Context, time.Duration) error
}

// New makes a Client from cfg, filling its zero fields with the defaults.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	flavor, err := ParseFlavor(string(cfg.Flavor))
	if err != nil {
		return nil, err
	}
	c := &Client{
		endpoint: endpointFor(u),
		apiKey:   cfg.APIKey,
		flavor:   flavor,
		dialect:  dialectFor(flavor),
		http:     cfg.HTTPClient,
		retry: retryPolicy{
			maxAttempts: orDefault(cfg.MaxAttempts, DefaultMaxAttempts),
			base:        orDefault(cfg.BackoffBase, DefaultBackoffBase),
			maxDelay:    orDefault(cfg.MaxDelay, DefaultMaxDelay),
		},
		maxCallTime:    orDefault(cfg.MaxCallTime, DefaultMaxCallTime),
		maxOutputBytes: orDefault(cfg.MaxOutputBytes, DefaultMaxOutputBytes),
		idleTimeout:    orDefault(cfg.IdleTimeout, DefaultIdleTimeout),
		log:            cfg.Logger,
		sleep:          sleep,
	}
	c.callTooLong = callTooLong(c.maxCallTime)
	if c.apiKey != "" {
		c.authorization = []string{"Bearer " + c.apiKey}
	}
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport()}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// endpointFor appends the chat-completions path to the API root, keeping
// any query (some gateways want an api-version there).
func endpointFor(base *url.URL) string {
	u := *base
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/chat/completions") {
		u.Path += "/chat/completions"
	}
	u.RawPath = ""
	return u.String()
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Flavor is the dialect the client speaks.
func (c *Client) Flavor() Flavor { return c.flavor }

// String names the client without its key.
func (c *Client) String() string {
	return fmt.Sprintf("llm.Client{%s %s}", c.flavor, c.endpoint)
}

// Stream sends req with streaming on and calls onDelta, from the calling
// goroutine and in order, for each piece of text, thinking or tool call
// progress; onDelta should not block, as its time counts against the idle
// timeout. It returns the assembled Response.
//
// Failures before any delta was delivered are retried (see Config); after
// one was, the error wraps ErrInterrupted and the Response holds what had
// arrived. On cancellation of ctx the error wraps the context's cause. Past
// a limit (Limits) the error is ErrCallTooLong or ErrOutputTooLarge, never
// retried, and the Response again holds what had arrived.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	return c.call(ctx, req, true, onDelta)
}

// Complete sends req without streaming and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	return c.call(ctx, req, false, nil)
}

func (c *Client) call(ctx context.Context, req Request, stream bool, onDelta func(Delta)) (Response, error) {
	body, err := encodeRequest(c.dialect, req, stream)
	if err != nil {
		return Response{}, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.maxCallTime, c.callTooLong)
	defer cancel()

	delivered := false
	emit := func(d Delta) {
		delivered = true
		if onDelta != nil {
			onDelta(d)
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, body, stream, emit)
		switch {
		case err == nil:
			return resp, nil
		case ctx.Err() != nil, errors.Is(err, ErrOutputTooLarge):
			return resp, err
		case delivered:
			return resp, fmt.Errorf("%w: %w", ErrInterrupted, err)
		}
		wait, retry := c.retry.wait(ctx, attempt, err)
		if !retry {
			return resp, err
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm call failed, retrying",
			slog.String("endpoint", c.endpoint), slog.Int("attempt", attempt),
			slog.Duration("wait", wait), slog.String("error", err.Error()))
		if err := c.sleep(ctx, wait); err != nil {
			return Response{}, contextFailure(err)
		}
	}
}

// attempt is one HTTP exchange. Its context carries the idle timer, which
// every read of the response pushes back.
func (c *Client) attempt(ctx context.Context, body requestBody, stream bool, emit func(Delta)) (Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := startIdleTimer(c.idleTimeout, func() { cancel(ErrIdleTimeout) })
	defer idle.stop()

	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, nil)
	if err != nil {
		return Response{}, fmt.Errorf("llm: build request: %w", err)
	}
	httpReq.Body, httpReq.GetBody = body.httpBody()
	httpReq.ContentLength = int64(body.size())
	// The header's keys are canonical and its values shared by every
	// request: neither the client nor the transport changes them.
	httpReq.Header["Content-Type"] = jsonMediaType
	httpReq.Header["Accept"] = jsonMediaType
	if stream {
		httpReq.Header["Accept"] = eventStreamMediaType
	}
	if c.authorization != nil {
		httpReq.Header["Authorization"] = c.authorization
	}

	httpResp, err := c.http.Do(httpReq)
	if err != nil {
		return Response{}, attemptFailure(ctx, fmt.Errorf("llm: send request: %w", err))
	}
	defer httpResp.Body.Close()
	idle.touch()

	if httpResp.StatusCode < 200 || httpResp.StatusCode > 299 {
		// A body cut short still says more than none: keep what arrived.
		errBody, _ := io.ReadAll(io.LimitReader(httpResp.Body, maxErrorBody))
		return Response{}, newAPIError(httpResp.StatusCode, errBody, httpResp.Header, c.apiKey, time.Now())
	}

	respBody := &activityReader{r: httpResp.Body, idle: idle}
	var resp Response
	// A server may ignore stream:true and answer with one JSON document.
	if stream && !isJSON(httpResp.Header.Get("Content-Type")) {
		resp, err = c.readStream(respBody, httpResp.StatusCode, emit)
	} else {
		resp, err = c.readWhole(respBody, httpResp.StatusCode, emit)
	}
	if err != nil {
		return resp, attemptFailure(ctx, err)
	}
	return resp, nil
}

// readStream folds a server-sent event stream into a Response.
func (c *Client) readStream(body io.Reader, status int, emit func(Delta)) (Response, error) {
	asm := newAssembler(emit, c.maxOutputBytes)
	events := newSSEReader(body, rawBound(c.maxOutputBytes))
	defer events.release()
	var parser chunkParser
	var chunk wireChunk
	for {
		data, err := events.next()
		if errors.Is(err, errEventTooLarge) {
			return asm.response(), outputTooLarge(c.maxOutputBytes)
		}
		if errors.Is(err, io.EOF) {
			// Some servers end without [DONE]; a finish reason says the
			// completion is whole all the same.
			if asm.finishReason == "" {
				return asm.response(), ErrTruncated
			}
			return asm.response(), nil
		}
		if err != nil {
			return asm.response(), fmt.Errorf("llm: read stream: %w", err)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			return asm.response(), nil
		}
		chunk = wireChunk{}
		if err := parser.decodeAnswer(data, &chunk); err != nil {
			return asm.response(), fmt.Errorf("llm: malformed stream chunk: %w", err)
		}
		if chunk.hasError() {
			return asm.response(), newAPIError(status, data, nil, c.apiKey, time.Now())
		}
		if err := asm.add(chunk); err != nil {
			return asm.response(), err
		}
	}
}

// readWhole reads a non-streamed completion.
func (c *Client) readWhole(body io.Reader, status int, emit func(Delta)) (Response, error) {
	bound := rawBound(c.maxOutputBytes)
	data, err := io.ReadAll(io.LimitReader(body, int64(bound)+1))
	if err != nil {
		return Response{}, fmt.Errorf("llm: read response: %w", err)
	}
	if len(data) > bound {
		return Response{}, outputTooLarge(c.maxOutputBytes)
	}
	var completion wireChunk
	var parser chunkParser
	if err := parser.decodeAnswer(data, &completion); err != nil {
		return Response{}, fmt.Errorf("llm: malformed completion: %w", err)
	}
	if completion.hasError() {
		return Response{}, newAPIError(status, data, nil, c.apiKey, time.Now())
	}
	if len(completion.Choices) == 0 {
		return Response{}, errors.New("llm: completion has no choices")
	}
	asm := newAssembler(emit, c.maxOutputBytes)
	if err := asm.add(completion); err != nil {
		return asm.response(), err
	}
	return asm.response(), nil
}

// rawBound is the most bytes one stream event, or a whole completion, may
// take for an answer of at most limit bytes: JSON escapes a byte in at most
// 6 (\u00XX), and the rest of a chunk (ids, usage, field names) is small.
func rawBound(limit int64) int {
	const slack = 64 << 10
	if limit > (math.MaxInt-slack)/6 {
		return math.MaxInt
	}
	return int(6*limit + slack)
}

// attemptFailure explains a failed exchange. When the exchange's context
// ended, its cause (the idle timer, the call time limit, the caller's
// cancellation) is the real error, not the broken read it led to.
func attemptFailure(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return contextFailure(cause)
	}
	return err
}

func contextFailure(cause error) error {
	if errors.Is(cause, ErrIdleTimeout) || errors.Is(cause, ErrCallTooLong) {
		return cause
	}
	return fmt.Errorf("llm: call ended: %w", cause)
}

var (
	jsonMediaType        = []string{"application/json"}
	eventStreamMediaType = []string{"text/event-stream"}
)

// isJSON says whether a Content-Type is application/json. One with no
// parameters, as a stream's always is, is read without
// mime.ParseMediaType, which makes a map for them; the two agree on it.
func isJSON(contentType string) bool {
	if !strings.Contains(contentType, ";") {
		return strings.TrimSpace(strings.ToLower(contentType)) == "application/json"
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// idleTimer fires when nothing happened for its duration.
type idleTimer struct {
	t *time.Timer
	d time.Duration
}

func startIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{t: time.AfterFunc(d, fire), d: d}
}

func (i *idleTimer) touch() { i.t.Reset(i.d) }
func (i *idleTimer) stop()  { i.t.Stop() }

// activityReader pushes the idle timer back whenever data arrives.
type activityReader struct {
	r    io.Reader
	idle *idleTimer
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.idle.touch()
	}
	return n, err
}
