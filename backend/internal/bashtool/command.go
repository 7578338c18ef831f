package bashtool

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Shell is the program a command line runs under.
const Shell = "/bin/sh"

// Command is one command line run by a shell, for the tools that run
// commands rather than scripts (a SystemToolbox's execute-command). It
// starts as scripts do, through runProcess: in a process group of its
// own, from the clean environment, recorded by the reaper, and confined
// by Env.Confine (the sandbox) when it is set.
type Command struct {
	Line  string
	Stdin []byte
	// Dir is the directory the command runs in.
	Dir string
	// PassEnv names variables of the server's environment the command
	// gets beside the base ones (see buildEnvironment).
	PassEnv []string
	// Env is what the run knows about the call (its WorkDir is unused:
	// Dir says where the command runs).
	Env    Env
	Limits Limits
}

// CommandResult is how a command ended.
type CommandResult struct {
	Stdout, Stderr string // capped, each with a note when cut
	// ExitCode is the exit status, or -1 when the command did not exit
	// by itself.
	ExitCode int
	// Err says why the command did not run to its end: it could not
	// start, timed out or was cancelled; nil when it exited.
	Err       error
	Truncated bool
}

// RunCommand runs c.Line under Shell (-c) and returns its output.
func RunCommand(ctx context.Context, c Command) CommandResult {
	environ, err := buildEnvironment(os.Environ(), c.PassEnv, c.Env, nil)
	if err != nil {
		return CommandResult{ExitCode: -1, Err: err}
	}
	limits := c.Limits.withDefaults()
	out := runProcess(ctx, processSpec{
		path:      Shell,
		args:      []string{"-c", c.Line},
		dir:       c.Dir,
		env:       environ,
		stdin:     c.Stdin,
		timeout:   limits.Timeout,
		maxStdout: limits.MaxStdout,
		maxStderr: limits.MaxStderr,

		onStderrLine: c.Env.OnProgress,
		reaper:       c.Env.Reaper,
		confine:      c.Env.Confine,
	})
	r := CommandResult{ExitCode: -1, Stdout: out.stdout.text(), Stderr: out.stderr.text(),
		Truncated: out.stdout.truncated() || out.stderr.truncated()}
	switch out.cause {
	case stopNotStarted:
		r.Err = fmt.Errorf("could not be started: %w", out.startErr)
	case stopTimedOut:
		r.Err = fmt.Errorf("timed out after %s and was killed", limits.Timeout)
	case stopCancelled:
		r.Err = errors.New("was cancelled")
	case stopExited:
		r.ExitCode = out.state.ExitCode()
	}
	return r
}
