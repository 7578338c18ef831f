package bashtool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Result is the outcome of one tool call, in the form the model receives
// it. Every failure the model should know about (bad arguments, non-zero
// exit, timeout, cancellation) is a Result with IsError set.
type Result struct {
	Text    string // what the model sees
	IsError bool
	// ExitCode is the script's exit status, or -1 when it did not exit by
	// itself: never started, killed, or ended by a signal.
	ExitCode  int
	Duration  time.Duration
	Truncated bool   // some stdout or stderr was cut from Text
	Stderr    string // the script's stderr (capped), for logs
}

// Run calls the tool with the model's arguments, each as its JSON value
// (decoded once, by the caller: no key twice, none in another case). See
// the package documentation for how arguments, environment and limits
// apply. Run only reads the Tool, so concurrent calls are safe.
func (t *Tool) Run(ctx context.Context, args map[string]json.RawMessage, env Env) Result {
	inv, err := t.prepareInvocation(args)
	if err != nil {
		return failedBeforeStart(err.Error())
	}
	environ, err := buildEnvironment(os.Environ(), t.PassEnv, env, inv.env)
	if err != nil {
		return failedBeforeStart(fmt.Sprintf("%s could not be run: %v", t.Name(), err))
	}
	dir := env.WorkDir
	if dir == "" {
		dir = filepath.Dir(t.Path)
	}
	limits := t.Limits.withDefaults()

	out := runProcess(ctx, processSpec{
		path:      t.Path,
		args:      append([]string{"run"}, inv.argv...),
		dir:       dir,
		env:       environ,
		stdin:     inv.stdin,
		timeout:   limits.Timeout,
		maxStdout: limits.MaxStdout,
		maxStderr: limits.MaxStderr,

		onStderrLine: env.OnProgress,
		reaper:       env.Reaper,
		confine:      env.Confine,
	})
	return t.resultOf(out, limits)
}

func failedBeforeStart(text string) Result {
	return Result{Text: text, IsError: true, ExitCode: -1}
}

func (t *Tool) resultOf(out processOutcome, limits Limits) Result {
	r := Result{
		ExitCode: -1,
		Duration: out.duration,
		Stderr:   out.stderr.text(),
	}
	switch out.cause {
	case stopNotStarted:
		r.IsError = true
		r.Text = fmt.Sprintf("%s could not be started: %v", t.Name(), out.startErr)
		return r
	case stopTimedOut:
		r.IsError = true
		r.Text = withOutput(fmt.Sprintf("%s timed out after %s and was killed", t.Name(), limits.Timeout), out)
	case stopCancelled:
		r.IsError = true
		if out.state == nil {
			r.Text = fmt.Sprintf("%s was cancelled before it started", t.Name())
			return r
		}
		r.Text = withOutput(fmt.Sprintf("%s was cancelled and killed", t.Name()), out)
	case stopExited:
		r.ExitCode = out.state.ExitCode()
		if out.state.Success() {
			r.Text = out.stdout.text()
			if out.stdout.total == 0 && t.EmptyResult != "" {
				r.Text = t.EmptyResult
			}
			r.Truncated = out.stdout.truncated()
			return r
		}
		r.IsError = true
		// "exit status 3" or "signal: segmentation fault"
		r.Text = withOutput(fmt.Sprintf("%s failed: %s", t.Name(), out.state), out)
	}
	r.Truncated = out.stdout.truncated() || out.stderr.truncated()
	return r
}

// withOutput appends whatever the script printed to a failure message:
// stderr usually says what went wrong, but many scripts report on stdout.
func withOutput(headline string, out processOutcome) string {
	var b strings.Builder
	b.WriteString(headline)
	for _, section := range []struct {
		name   string
		output *capture
	}{
		{"stderr", out.stderr},
		{"stdout", out.stdout},
	} {
		if section.output.total == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n--- %s ---\n%s", section.name, strings.TrimRight(section.output.text(), "\n"))
	}
	return b.String()
}
