//go:build unix

package bashtool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"
)

func TestRunTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	tool := mustDescribe(t, "hang.sh")
	// The pids are only known once the script has written them; on a slow
	// machine the first timeouts may elapse before that, so grow the
	// timeout until a run gets that far. The outcome is what is checked.
	for timeout := 200 * time.Millisecond; ; timeout *= 2 {
		if timeout > 20*time.Second {
			t.Fatal("hang.sh never got to record its pids before the timeout")
		}
		pidFile := filepath.Join(t.TempDir(), "pids")
		tool.Limits.Timeout = timeout
		res := tool.Run(context.Background(), nil, Env{Extra: map[string]string{"PID_FILE": pidFile}})

		if !res.IsError || res.ExitCode != -1 {
			t.Fatalf("Run = %+v, want an error result with exit code -1", res)
		}
		wantHead := fmt.Sprintf("bash_hang timed out after %s and was killed", timeout)
		if !strings.HasPrefix(res.Text, wantHead) {
			t.Fatalf("Text = %q, want it to start with %q", res.Text, wantHead)
		}
		pids, ok := readPids(t, pidFile)
		if !ok {
			continue
		}
		if !strings.Contains(res.Text, "--- stdout ---\nstarted") {
			t.Errorf("Text = %q, want the output printed before the timeout", res.Text)
		}
		for _, pid := range pids {
			waitUntilGone(t, pid)
		}
		return
	}
}

func TestRunContextCancelKillsTheWholeProcessGroup(t *testing.T) {
	tool := mustDescribe(t, "hang.sh")
	tool.Limits.Timeout = time.Hour // only the cancellation can end this run
	pidFile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	done := make(chan Result, 1)
	go func() {
		done <- tool.Run(ctx, nil, Env{Extra: map[string]string{"PID_FILE": pidFile}})
	}()
	var pids []int
	for {
		var ok bool
		if pids, ok = readPids(t, pidFile); ok {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("Run returned before being cancelled: %+v", res)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()

	res := <-done
	if !res.IsError || res.ExitCode != -1 || !strings.HasPrefix(res.Text, "bash_hang was cancelled and killed") {
		t.Fatalf("Run = %+v, want a cancellation error result", res)
	}
	for _, pid := range pids {
		waitUntilGone(t, pid)
	}
}

func TestRunKillsWhatTheScriptLeftBehind(t *testing.T) {
	tool := mustDescribe(t, "leave-child.sh")
	// The child keeps the script's stdout open: the run must still end as
	// soon as the script exits, with the child killed, not at the timeout.
	tool.Limits.Timeout = 10 * time.Second
	pidFile := filepath.Join(t.TempDir(), "pid")

	res := tool.Run(context.Background(), nil, Env{Extra: map[string]string{"PID_FILE": pidFile}})
	if res.IsError || res.ExitCode != 0 || res.Text != "done\n" {
		t.Fatalf("Run = %+v, want success with \"done\\n\"", res)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	waitUntilGone(t, pid)
}

func TestRunWithCancelledContextDoesNotStart(t *testing.T) {
	tool := mustDescribe(t, "leave-child.sh")
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := tool.Run(ctx, nil, Env{Extra: map[string]string{"PID_FILE": pidFile}})
	if !res.IsError || !strings.HasPrefix(res.Text, "bash_leave_child was cancelled") {
		t.Errorf("Run = %+v, want a cancellation error result", res)
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the script ran although the context was already cancelled")
	}
}

// The parent-death signal fires when the thread that started the process
// exits, not the process: Go ends a thread whenever a goroutine locked to
// it returns. A run must survive that.
func TestRunSurvivesExitingThreads(t *testing.T) {
	tool := mustDescribe(t, "sleep-ok.sh")
	done := make(chan Result, 1)
	go func() { done <- tool.Run(context.Background(), nil, Env{}) }()
	for {
		select {
		case res := <-done:
			if res.IsError || res.Text != "ok\n" {
				t.Fatalf("Run = %+v, want success", res)
			}
			return
		default:
		}
		var wg sync.WaitGroup
		for range 4 * runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
				// While this goroutine holds its thread, the others need
				// more threads: idle ones, such as the one that started
				// the script, are put to work and end the same way.
				time.Sleep(time.Millisecond)
			})
		}
		wg.Wait()
	}
}

// readPids reads the "pid pid..." line hang.sh writes once it is running.
func readPids(t *testing.T, path string) ([]int, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, field := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			t.Fatalf("pid file %q: %v", data, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		t.Fatalf("pid file %s is empty", path)
	}
	return pids, true
}

// waitUntilGone fails the test unless pid dies soon. A killed process may
// stay a zombie until its new parent reaps it; that counts as gone.
func waitUntilGone(t *testing.T, pid int) {
	t.Helper()
	if !eventually.Holds(10*time.Second, func() bool { return processGone(pid) }) {
		t.Errorf("process %d is still running", pid)
		killLeftovers(pid)
	}
}

// killLeftovers makes sure a failed test does not leak the process, nor
// the rest of the tool's process group (never the test's own group).
func killLeftovers(pid int) {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid != syscall.Getpgrp() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return false // no procfs to tell a zombie from a live process
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	// The state is the first field after the parenthesised command name.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}
