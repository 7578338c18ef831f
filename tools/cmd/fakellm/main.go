// Command fakellm serves the offline model: an OpenAI-compatible
// chat-completions endpoint answering from a rules file.
//
//	fakellm --rules FILE [--addr 127.0.0.1:0] [--record FILE] [--context-window N] [--quiet]
//	fakellm --rules FILE --check
//
// The first line it prints on stdout is the base URL to give a client, such
// as http://127.0.0.1:40123/v1. Each request is logged on stderr (unless
// --quiet) and, with --record, appended to a file as a JSON line. The rules
// format is documented in docs/fakellm.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}

// errUsage means the flags were wrong; the flag package already said how.
var errUsage = errors.New("usage")

// shutdownGrace is how long requests in flight get to finish on shutdown
// before their connections are dropped.
const shutdownGrace = time.Second

type options struct {
	rulesPath  string
	addr       string
	recordPath string
	// contextWindow replaces the rules file's context_window when
	// contextWindowSet, which lets 0 lift a window the file sets.
	contextWindow    int
	contextWindowSet bool
	check            bool
	quiet            bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.rulesPath, "rules", "", "rules `file` (JSON, see docs/fakellm.md); without it every request gets the default reply")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "`address` to listen on; port 0 picks a free port")
	fs.StringVar(&o.recordPath, "record", "", "append every request to `file` as a JSON line")
	fs.IntVar(&o.contextWindow, "context-window", 0, "the model's context length in `tokens` (about 4 characters each); longer requests get a 400 context_length_exceeded. Replaces the rules file's context_window; 0 is unlimited")
	fs.BoolVar(&o.check, "check", false, "check the rules file and exit")
	fs.BoolVar(&o.quiet, "quiet", false, "do not log requests on stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, errUsage
	}
	fs.Visit(func(f *flag.Flag) { o.contextWindowSet = o.contextWindowSet || f.Name == "context-window" })
	if o.contextWindow < 0 {
		fmt.Fprintf(stderr, "fakellm: --context-window must not be negative, got %d\n", o.contextWindow)
		fs.Usage()
		return o, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakellm: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return o, errUsage
	}
	if o.check && o.rulesPath == "" {
		fmt.Fprintln(stderr, "fakellm: --check needs --rules")
		return o, errUsage
	}
	return o, nil
}

// run serves until ctx ends. It prints the base URL as the first line of
// stdout once the server is listening.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var rules fakellm.Rules
	if o.rulesPath != "" {
		if rules, err = fakellm.LoadRules(o.rulesPath); err != nil {
			return err
		}
	}
	if o.contextWindowSet {
		rules.ContextWindow = o.contextWindow
	}
	if o.check {
		fmt.Fprintf(stdout, "%s: %d rules, OK\n", o.rulesPath, len(rules.Rules))
		return nil
	}

	log := &requestLog{stderr: stderr, quiet: o.quiet}
	if o.recordPath != "" {
		f, err := os.OpenFile(o.recordPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		log.record = f
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: fakellm.New(rules, fakellm.OnRequest(log.request)), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, baseURL(ln.Addr())); err != nil {
		server.Close()
		return err
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		server.Close() // streams still running: drop them
	}
	return nil
}

// baseURL is the URL a client dials for addr. A wildcard listen address is
// not dialable everywhere, so it becomes the loopback address.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/v1"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/v1"
}
