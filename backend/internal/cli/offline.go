package cli

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
)

// serveOfflineRules takes what --offline-model names: the URL of a model
// endpoint, used as it is, or the rules file of the offline model (see
// docs/fakellm.md), which this process then serves on a loopback port of
// its own until stop. So `agents run --offline-model offline-rules.json`
// works with nothing else running.
func serveOfflineRules(value string) (url string, stop func(), err error) {
	if !isRulesFile(value) {
		return value, func() {}, nil
	}
	rules, err := fakellm.LoadRules(value)
	if err != nil {
		return "", nil, fmt.Errorf("--offline-model %s: %w", value, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("--offline-model %s: %w", value, err)
	}
	srv := &http.Server{Handler: fakellm.New(rules), ReadHeaderTimeout: 10 * time.Second}
	// Serve returns at stop, with http.ErrServerClosed.
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}

// isRulesFile says whether an --offline-model value names a rules file
// rather than an endpoint: anything that is not a URL.
func isRulesFile(value string) bool {
	return value != "" && !strings.Contains(value, "://")
}
