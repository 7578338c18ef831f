package bashtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/confine"
)

// Bounds of "describe". A description is small and quick to print; a script
// that does more is broken and must not hold up loading the other tools.
const (
	DescribeTimeout        = 10 * time.Second
	maxDescriptionSize     = 1 << 20
	maxDescribeStderrShown = 4 << 10
)

// DescribeError is why a script could not be described.
type DescribeError struct {
	Script string // path of the script
	Err    error
}

func (e *DescribeError) Error() string { return e.Script + ": describe: " + e.Err.Error() }

func (e *DescribeError) Unwrap() error { return e.Err }

// Describer runs "describe": where the scripts may lie, and how their
// process is confined.
type Describer struct {
	// Within, when set, are the only folders a script may lie in (a
	// stored agent's scripts: see confine); it is run from its real path.
	Within []string
	// Confine, when set, rewrites the describe command before it starts,
	// so that it runs confined (a sandbox's Wrap); release, when not nil,
	// is called once the process ended. An error fails the describe, and
	// the script does not run.
	Confine func(*exec.Cmd) (release func(), err error)
}

// Describe runs "SCRIPT describe" and validates what it prints. The script
// runs in its own directory with the base variables of the server's
// environment only (see Tool.PassEnv; the reserved AGENT_* variables are
// for runs) and is killed after
// DescribeTimeout or when ctx ends. Errors are *DescribeError.
func Describe(ctx context.Context, scriptPath string) (Tool, error) {
	return Describer{}.describe(ctx, scriptPath)
}

// Describe is Describe with d's confinement; with d.Within, only a script
// that really lies in those folders is run, from its real path, so that
// no link leads the run elsewhere.
func (d Describer) Describe(ctx context.Context, scriptPath string) (Tool, error) {
	if len(d.Within) == 0 {
		return d.describe(ctx, scriptPath)
	}
	real, err := confine.Program(scriptPath, d.Within)
	if err != nil {
		return Tool{}, &DescribeError{Script: scriptPath, Err: err}
	}
	return d.describe(ctx, real)
}

func (d Describer) describe(ctx context.Context, scriptPath string) (Tool, error) {
	path, err := filepath.Abs(scriptPath)
	if err != nil {
		return Tool{}, &DescribeError{Script: scriptPath, Err: err}
	}
	fail := func(err error) (Tool, error) { return Tool{}, &DescribeError{Script: path, Err: err} }

	if err := checkExecutableFile(path); err != nil {
		return fail(err)
	}
	env, err := buildEnvironment(os.Environ(), nil, Env{}, nil)
	if err != nil {
		return fail(err)
	}
	spec := processSpec{
		path:      path,
		args:      []string{"describe"},
		dir:       filepath.Dir(path),
		env:       env,
		timeout:   DescribeTimeout,
		maxStdout: maxDescriptionSize,
		maxStderr: maxDescribeStderrShown,
	}
	if d.Confine != nil {
		var release func()
		defer func() {
			if release != nil {
				release()
			}
		}()
		spec.confine = func(cmd *exec.Cmd) (err error) {
			release, err = d.Confine(cmd)
			return err
		}
	}
	out := runProcess(ctx, spec)
	switch out.cause {
	case stopNotStarted:
		return fail(out.startErr)
	case stopTimedOut:
		return fail(fmt.Errorf("timed out after %s", DescribeTimeout))
	case stopCancelled:
		return fail(fmt.Errorf("cancelled: %w", context.Cause(ctx)))
	}
	if !out.state.Success() {
		msg := out.state.String() // "exit status 1", "signal: killed"
		if stderr := strings.TrimSpace(out.stderr.text()); stderr != "" {
			msg += ": " + stderr
		}
		return fail(errors.New(msg))
	}
	if out.stdout.truncated() {
		return fail(fmt.Errorf("description is larger than %d bytes", maxDescriptionSize))
	}
	desc, err := parseDescription(out.stdout.kept)
	if err != nil {
		return fail(err)
	}
	return Tool{
		Path:            path,
		Slug:            desc.Slug,
		Description:     desc.Description,
		Args:            desc.Args,
		EmptyResult:     desc.EmptyResult,
		OutputMediaType: desc.OutputMediaType,
	}, nil
}

// checkExecutableFile gives a clearer error than exec would for the usual
// mistakes: a wrong path, a directory, a missing chmod +x.
func checkExecutableFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if !isExecutable(info) {
		return errors.New("not executable (chmod +x)")
	}
	return nil
}

// isExecutable looks at the mode bits only; a file executable by someone
// else but not by the server fails when run, with the system's error.
func isExecutable(info os.FileInfo) bool {
	return info.Mode().Perm()&0o111 != 0
}
