package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func TestDialUnderstandsEveryAddressForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target, wantTarget string
		wantErr            bool
	}{
		{"http://127.0.0.1:7420", "http://127.0.0.1:7420", false},
		{"http://127.0.0.1:7420/", "http://127.0.0.1:7420", false},
		{"https://agents.example.com", "https://agents.example.com", false},
		{"unix:///run/agents.sock", "/run/agents.sock", false},
		{"/run/agents.sock", "/run/agents.sock", false},
		{"./agents.sock", "./agents.sock", false},
		{"../run/agents.sock", "../run/agents.sock", false},
		{"unix://", "", true},
		{"127.0.0.1:7420", "", true},
		{"agents.sock", "", true},
		{"ftp://host", "", true},
		{"http://", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		c, err := Dial(tc.target, "")
		if tc.wantErr {
			if err == nil {
				t.Errorf("Dial(%q) = %q, want an error", tc.target, c.Target)
			} else if !strings.Contains(err.Error(), "want http(s)://") && !strings.Contains(err.Error(), "empty") {
				t.Errorf("Dial(%q): %v, want the accepted forms named", tc.target, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Dial(%q): %v", tc.target, err)
			continue
		}
		if c.Target != tc.wantTarget {
			t.Errorf("Dial(%q).Target = %q, want %q", tc.target, c.Target, tc.wantTarget)
		}
		c.Close()
	}
}

func TestDialReachesAServerOnAUnixSocket(t *testing.T) {
	t.Parallel()
	f := &fakeServer{play: func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error { return hold(ctx) }}
	path := filepath.Join(t.TempDir(), "agents.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, target := range []string{path, "unix://" + path} {
		c, err := Dial(target, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("Check over %s: %v", target, err)
		}
		c.Close()
	}
}

func TestTheTokenGoesWithStreamsAndUnaryCalls(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error {
		if err := send(heartbeatItem(1)); err != nil {
			return err
		}
		return hold(ctx)
	}, "secret-token")
	if _, err := c.Agents.ListAgents(context.Background(), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	collect(t, c.Subscribe(ctx, ownerScope), func(got []Update) bool { return len(got) == 1 })
	if got := f.connections()[0].authorization; got != "Bearer secret-token" {
		t.Errorf("stream Authorization %q, want the bearer token", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.unary) != 1 || f.unary[0] != "Bearer secret-token" {
		t.Errorf("unary Authorization %q, want the bearer token", f.unary)
	}
	if s := bearer("secret-token").String(); strings.Contains(s, "secret") {
		t.Errorf("the interceptor prints as %q, showing the token", s)
	}
}

// counting is an interceptor that counts the calls and streams it sees.
type counting struct {
	unary, streams *int
}

func (c counting) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		*c.unary++
		return next(ctx, req)
	}
}

func (c counting) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		*c.streams++
		return next(ctx, spec)
	}
}

func (c counting) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func TestInterceptedSeesCallsAndSubscribeAndKeepsTheToken(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error {
		if err := send(heartbeatItem(1)); err != nil {
			return err
		}
		return hold(ctx)
	}, "secret-token")
	var unary, streams int
	ic := c.Intercepted(counting{&unary, &streams})
	if ic.Target != c.Target {
		t.Errorf("Target %q, want %q", ic.Target, c.Target)
	}
	if _, err := ic.Agents.ListAgents(context.Background(), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	collect(t, ic.Subscribe(ctx, ownerScope), func(got []Update) bool { return len(got) == 1 })
	if unary != 1 || streams != 1 {
		t.Errorf("the interceptor saw %d calls and %d streams, want 1 and 1", unary, streams)
	}
	if _, err := c.Agents.ListAgents(context.Background(), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	if unary != 1 {
		t.Errorf("a call of the original client went through the interceptor")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.unary) != 2 || f.unary[0] != "Bearer secret-token" {
		t.Errorf("unary Authorization %q, want the bearer token", f.unary)
	}
}

func TestNoTokenSendsNoAuthorization(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, nil, "")
	if _, err := c.Agents.ListAgents(context.Background(), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unary[0] != "" {
		t.Errorf("Authorization %q without a token", f.unary[0])
	}
}

func TestACallsTokenReplacesTheClients(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error {
		if err := send(heartbeatItem(1)); err != nil {
			return err
		}
		return hold(ctx)
	}, "own-token")
	ctx, cancel := context.WithCancel(WithToken(context.Background(), "caller-token"))
	defer cancel()
	if _, err := c.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agents.ListAgents(context.Background(), connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatal(err)
	}
	collect(t, c.Subscribe(ctx, ownerScope), func(got []Update) bool { return len(got) == 1 })
	if got := f.connections()[0].authorization; got != "Bearer caller-token" {
		t.Errorf("stream Authorization %q, want the caller's token", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := []string{"Bearer caller-token", "Bearer own-token"}; !slices.Equal(f.unary, want) {
		t.Errorf("unary Authorization %q, want %q", f.unary, want)
	}
}

func TestInProcessStreamsEachEventAsItIsSent(t *testing.T) {
	t.Parallel()
	// The server sends the next event only once the client has the one
	// before: a transport that held writes back would deadlock here.
	received := make(chan struct{})
	handlerDone := make(chan struct{})
	f := &fakeServer{play: func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error {
		defer close(handlerDone)
		if err := send(heartbeatItem(0)); err != nil {
			return err
		}
		for seq := uint64(1); seq <= 3; seq++ {
			if err := send(eventItem(seq, 0)); err != nil {
				return err
			}
			select {
			case <-received:
			case <-ctx.Done():
				return nil
			}
		}
		return hold(ctx)
	}}
	c := InProcess(f.handler())
	if c.Target != "in-process" {
		t.Errorf("Target %q", c.Target)
	}
	if err := c.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := c.Subscribe(ctx, ownerScope)
	for want := uint64(1); want <= 3; want++ {
		got := collect(t, updates, untilEvents(1))
		if e := events(got); e[0].Seq != want {
			t.Fatalf("event %v, want %d", e, want)
		}
		received <- struct{}{}
	}

	// Close ends the stream still open and returns once its handler did.
	c.Close()
	select {
	case <-handlerDone:
	default:
		t.Error("Close returned with a handler still running")
	}
	callCtx, callCancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer callCancel()
	if _, err := c.Agents.ListAgents(callCtx, connect.NewRequest(&agentsv1.ListAgentsRequest{})); err == nil {
		t.Error("a call after Close succeeded")
	}
	c.Close() // a second Close does nothing
}

func TestCheckTellsWhatIsWrongWithTheTarget(t *testing.T) {
	t.Parallel()
	agents := &fakeServer{}
	withAuth := httptest.NewServer(requireToken("good-token", agents.handler()))
	t.Cleanup(withAuth.Close)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	webPage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	t.Cleanup(webPage.Close)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	missing := filepath.Join(t.TempDir(), "missing.sock")

	tests := []struct {
		name, target, token string
		want                error
		says                string
	}{
		{"an agents server", withAuth.URL, "good-token", nil, ""},
		{"a dead port", deadURL, "", ErrUnreachable, "connection refused"},
		{"a missing socket", missing, "", ErrUnreachable, "no such socket"},
		{"a server without Connect", notFound.URL, "", ErrNotAgents, "not an agents server"},
		{"a web page", webPage.URL, "", ErrNotAgents, "not an agents server"},
		{"no token", withAuth.URL, "", ErrUnauthenticated, "token is required"},
		{"a wrong token", withAuth.URL, "bad-token", ErrUnauthenticated, "not valid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Dial(tc.target, tc.token)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Check(context.Background())
			if tc.want == nil {
				if err != nil {
					t.Errorf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Check: %v, want %v", err, tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, c.Target) || !strings.Contains(msg, tc.says) {
				t.Errorf("Check: %q, want it to name %s and say %q", msg, c.Target, tc.says)
			}
		})
	}
}

func TestCheckGivesUpOnASilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	// Connections are accepted by the kernel and never answered.
	c, err := Dial("http://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Check(ctx); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("Check: %v, want no answer", err)
	}
}

// requireToken answers like an agents server with auth: a Connect error
// without the right bearer token.
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := ""
		switch r.Header.Get("Authorization") {
		case "Bearer " + token:
			next.ServeHTTP(w, r)
			return
		case "":
			msg = "a bearer token is required"
		default:
			msg = "the bearer token is not valid"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code": "unauthenticated", "message": "` + msg + `"}`))
	})
}

// A one-line JSON definition is compared indented; any other is left as
// it was given.
func TestDiffableDefinition(t *testing.T) {
	t.Parallel()
	if got := DiffableDefinition(`{"a":1,"b":[2]}`); got != "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n" {
		t.Errorf("one line of JSON: %q", got)
	}
	for _, def := range []string{"{\n  \"a\": 1\n}\n", "not json", ""} {
		if got := DiffableDefinition(def); got != def {
			t.Errorf("%q became %q", def, got)
		}
	}
}
