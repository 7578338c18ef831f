package bashtool

import (
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// pipeDrainGrace bounds how long output is still read after the script's
// process group is gone. Only a process that left the group (setsid) but
// kept the script's stdout or stderr open can make reading last that long.
const pipeDrainGrace = 2 * time.Second

// processSpec is one execution of a script.
type processSpec struct {
	path      string
	args      []string
	dir       string
	env       []string
	stdin     []byte
	timeout   time.Duration
	maxStdout int
	maxStderr int
	// onStderrLine, when set, gets each stderr line as it comes.
	onStderrLine func(line string)
	// reaper, when set, records the process group while it runs.
	reaper *Reaper
	// confine, when set, rewrites the command before it starts (see
	// Env.Confine).
	confine func(*exec.Cmd) error
}

// stopCause says why a process is no longer running.
type stopCause int

const (
	stopExited     stopCause = iota // ran to completion (any exit status)
	stopNotStarted                  // could not be started, see startErr
	stopTimedOut                    // killed when the timeout elapsed
	stopCancelled                   // killed because the context ended
)

type processOutcome struct {
	cause    stopCause
	startErr error
	state    *os.ProcessState // set once the process was waited for
	stdout   *capture
	stderr   *capture
	duration time.Duration
}

// runProcess runs spec in a process group of its own, feeds its stdin,
// captures its output, and makes sure that when it returns nothing the
// script started is still running — whether the script exited, timed out or
// was cancelled.
//
// Standard streams are plain OS pipes handed to the child rather than
// exec.Cmd's copying goroutines: Wait then returns as soon as the script
// exits, even while a background child still holds the pipes, and the group
// can be killed at that moment.
func runProcess(ctx context.Context, spec processSpec) (out processOutcome) {
	out.stdout = newCapture(spec.maxStdout)
	out.stderr = newCapture(spec.maxStderr)
	started := time.Now()
	defer func() { out.duration = time.Since(started) }()

	if ctx.Err() != nil {
		out.cause = stopCancelled
		return out
	}

	stdio, err := openStdio()
	if err != nil {
		out.cause, out.startErr = stopNotStarted, err
		return out
	}
	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.stdinRead, stdio.stdoutWrite, stdio.stderrWrite
	if spec.confine != nil {
		if err := spec.confine(cmd); err != nil {
			stdio.closeAll()
			out.cause, out.startErr = stopNotStarted, err
			return out
		}
	}
	startInOwnProcessGroup(cmd)
	exited, err := startAndWait(cmd, spec.reaper.track)
	// The child has its own copies of these ends now; keeping ours open
	// would stop the readers from ever seeing end-of-file.
	stdio.closeChildEnds()
	if err != nil {
		stdio.closeParentEnds()
		out.cause, out.startErr = stopNotStarted, err
		return out
	}

	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(out.stdout, stdio.stdoutRead) })
	readers.Go(func() {
		if spec.onStderrLine == nil {
			_, _ = io.Copy(out.stderr, stdio.stderrRead)
			return
		}
		lines := newProgressLines(spec.onStderrLine)
		_, _ = io.Copy(io.MultiWriter(out.stderr, lines), stdio.stderrRead)
		lines.close()
	})
	go func() {
		// A script that never reads stdin makes this fail with EPIPE
		// or stay blocked until the pipe is closed below; both are fine.
		_, _ = stdio.stdinWrite.Write(spec.stdin)
		_ = stdio.stdinWrite.Close()
	}()

	timeout := time.NewTimer(spec.timeout)
	defer timeout.Stop()
	select {
	case <-exited:
		out.cause = stopExited
	case <-timeout.C:
		out.cause = stopTimedOut
	case <-ctx.Done():
		out.cause = stopCancelled
	}
	if out.cause != stopExited {
		select {
		case <-exited: // it finished on its own in the meantime
			out.cause = stopExited
		default:
			killProcessGroup(cmd.Process)
			<-exited
		}
	}
	out.state = cmd.ProcessState

	// Whatever the script left running in its group dies with the call.
	killProcessGroup(cmd.Process)
	spec.reaper.untrack(cmd.Process.Pid)
	_ = stdio.stdinWrite.Close()
	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(pipeDrainGrace):
		stdio.closeParentEnds() // unblocks the readers
		<-drained
	}
	stdio.closeParentEnds()
	return out
}

// startAndWait starts cmd, calls started with its pid before anything can
// wait for it (so the pid cannot be reused meanwhile), and waits for it in
// the background: exited is closed once cmd.ProcessState is set.
//
// The parent-death signal (see dieWithParent) fires when the thread that
// started the child exits, and Go ends a thread whenever a goroutine
// locked to it returns — any goroutine, anywhere in the server, that
// happens to run on that thread later. So one goroutine starts the child
// and waits for it on a thread locked to it: no other goroutine runs on
// that thread, which lives at least until the child has exited.
func startAndWait(cmd *exec.Cmd, started func(pid int)) (exited <-chan struct{}, err error) {
	startErr := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		started(cmd.Process.Pid)
		startErr <- nil
		_ = cmd.Wait() // the exit status is read from cmd.ProcessState
		close(done)
	}()
	if err := <-startErr; err != nil {
		return nil, err
	}
	return done, nil
}

// stdio holds both ends of the three pipes of a child process.
type stdio struct {
	stdinRead, stdinWrite   *os.File
	stdoutRead, stdoutWrite *os.File
	stderrRead, stderrWrite *os.File
}

func openStdio() (*stdio, error) {
	var s stdio
	var err error
	if s.stdinRead, s.stdinWrite, err = os.Pipe(); err != nil {
		return nil, err
	}
	if s.stdoutRead, s.stdoutWrite, err = os.Pipe(); err != nil {
		s.closeAll()
		return nil, err
	}
	if s.stderrRead, s.stderrWrite, err = os.Pipe(); err != nil {
		s.closeAll()
		return nil, err
	}
	return &s, nil
}

func (s *stdio) closeChildEnds() {
	closeFiles(s.stdinRead, s.stdoutWrite, s.stderrWrite)
}

func (s *stdio) closeParentEnds() {
	closeFiles(s.stdinWrite, s.stdoutRead, s.stderrRead)
}

func (s *stdio) closeAll() {
	s.closeChildEnds()
	s.closeParentEnds()
}

// closeFiles closes the files that exist; closing twice is harmless here.
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}
