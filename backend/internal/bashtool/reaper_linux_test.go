//go:build linux

package bashtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// crashServerEnv makes the test binary act as a server that runs hang.sh
// with a Reaper and waits to be killed; its value is a scratch directory.
const crashServerEnv = "BASHTOOL_TEST_CRASH_SERVER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashServerEnv); dir != "" {
		runCrashServer(dir)
		os.Exit(2) // only reached when something went wrong
	}
	// Every test's processes and their readers end with it.
	goleak.VerifyTestMain(m)
}

// runCrashServer runs hang.sh, recording its group under dir/records and
// its pids in dir/pids, until the process is killed.
func runCrashServer(dir string) {
	reaper, err := NewReaper(filepath.Join(dir, "records"), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	tool, err := Describe(context.Background(), filepath.Join("testdata", "hang.sh"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	tool.Limits.Timeout = time.Hour
	res := tool.Run(context.Background(), nil, Env{
		Extra:  map[string]string{"PID_FILE": filepath.Join(dir, "pids")},
		Reaper: reaper,
	})
	fmt.Fprintf(os.Stderr, "hang.sh returned: %+v\n", res)
}

func TestKillLeftoversAfterTheServerWasKilled(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "records")
	server := exec.Command(os.Args[0])
	server.Env = append(os.Environ(), crashServerEnv+"="+dir)
	var serverStderr bytes.Buffer
	server.Stderr = &serverStderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()

	var pids []int
	for {
		var ok bool
		if pids, ok = readPids(t, filepath.Join(dir, "pids")); ok {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the server exited before its tool ran (%v): %s", err, serverStderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	script, child := pids[0], pids[1]
	defer killLeftovers(script)
	defer killLeftovers(child)
	if got := recordNames(t, records); len(got) != 1 {
		t.Fatalf("records while the tool runs = %v, want one", got)
	}

	// The crash.
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	// The script dies with the server (parent-death signal) ...
	waitUntilGone(t, script)
	// ... but a background child in its group does not, and is what the
	// next server has to kill.
	if processGone(child) {
		t.Fatal("the script's background child died with the server; this test cannot tell KillLeftovers works")
	}
	killed, err := KillLeftovers(records)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Errorf("KillLeftovers killed %d groups, want 1", killed)
	}
	waitUntilGone(t, child)
	if got := recordNames(t, records); len(got) != 0 {
		t.Errorf("records after KillLeftovers = %v, want none", got)
	}
	if killed, err := KillLeftovers(records); killed != 0 || err != nil {
		t.Errorf("KillLeftovers again = %d, %v; want 0, nil", killed, err)
	}
}

func TestRunRecordsItsProcessGroupWhileRunning(t *testing.T) {
	records := filepath.Join(t.TempDir(), "records")
	reaper, err := NewReaper(records, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The directory is made by the first tool, not at start: a server
	// that runs no tool does not pay for it (or leave it behind).
	if _, err := os.Stat(records); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("records directory before any tool ran: %v, want it absent", err)
	}
	tool := mustDescribe(t, "hang.sh")
	tool.Limits.Timeout = time.Hour
	pidFile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- tool.Run(ctx, nil, Env{Extra: map[string]string{"PID_FILE": pidFile}, Reaper: reaper})
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
	names := recordNames(t, records)
	if len(names) != 1 {
		t.Fatalf("records = %v, want one", names)
	}
	rec := readRecord(t, filepath.Join(records, names[0]))
	self, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	script, err := readProcStat(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	want := groupRecord{Pid: pids[0], Pgid: pids[0], Sid: script.sid, Start: script.start, Boot: rec.Boot,
		OwnerPid: os.Getpid(), OwnerStart: self.start}
	if rec != want || rec.Boot == "" {
		t.Errorf("record = %+v, want %+v", rec, want)
	}

	cancel()
	<-done
	if got := recordNames(t, records); len(got) != 0 {
		t.Errorf("records after the run = %v, want none", got)
	}
}

func TestKillLeftoversChecksWhoseGroupItIs(t *testing.T) {
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	self, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadOwner := exitedPid(t)

	for _, tc := range []struct {
		name       string
		record     func(leader int, stat procStat) groupRecord
		wantKilled bool
		wantKept   bool // the record stays
	}{
		{
			name: "the group of a dead server is killed",
			record: func(leader int, stat procStat) groupRecord {
				return groupRecord{Pid: leader, Pgid: leader, Sid: stat.sid, Start: stat.start, Boot: boot, OwnerPid: deadOwner}
			},
			wantKilled: true,
		},
		{
			name: "a recycled pid is not killed",
			record: func(leader int, stat procStat) groupRecord {
				return groupRecord{Pid: leader, Pgid: leader, Sid: stat.sid, Start: stat.start - 1, Boot: boot, OwnerPid: deadOwner}
			},
		},
		{
			name: "a record of an earlier boot is dropped",
			record: func(leader int, stat procStat) groupRecord {
				return groupRecord{Pid: leader, Pgid: leader, Sid: stat.sid, Start: stat.start, Boot: "another boot", OwnerPid: deadOwner}
			},
		},
		{
			name: "the group of a running server is left alone",
			record: func(leader int, stat procStat) groupRecord {
				return groupRecord{Pid: leader, Pgid: leader, Sid: stat.sid, Start: stat.start, Boot: boot,
					OwnerPid: os.Getpid(), OwnerStart: self.start}
			},
			wantKept: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leader := startGroup(t, "sleep 1000")
			stat, err := readProcStat(leader)
			if err != nil {
				t.Fatal(err)
			}
			records := t.TempDir()
			if err := writeGroupRecord(records, tc.record(leader, stat)); err != nil {
				t.Fatal(err)
			}
			killed, err := KillLeftovers(records)
			if err != nil {
				t.Fatal(err)
			}
			if got := killed == 1; got != tc.wantKilled {
				t.Errorf("KillLeftovers killed %d groups, want the group killed: %v", killed, tc.wantKilled)
			}
			if tc.wantKilled {
				waitUntilGone(t, leader)
			} else if processGone(leader) {
				t.Error("the process was killed")
			}
			if got := len(recordNames(t, records)) == 1; got != tc.wantKept {
				t.Errorf("record kept = %v, want %v", got, tc.wantKept)
			}
		})
	}
}

func TestKillLeftoversWithTheLeaderGone(t *testing.T) {
	boot, err := bootID()
	if err != nil {
		t.Fatal(err)
	}
	deadOwner := exitedPid(t)
	for _, tc := range []struct {
		name       string
		newSession bool // the group is in a session of its own, not the server's
		wantKilled bool
	}{
		{"members in the server's session are killed", false, true},
		{"members of another session are not", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The leader starts a child in its group, prints its pid and exits.
			cmd := exec.Command("/bin/sh", "-c", "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !tc.newSession, Setsid: tc.newSession}
			out, err := cmd.Output() // reaps the leader: its pid is free
			if err != nil {
				t.Fatal(err)
			}
			var child int
			if _, err := fmt.Sscan(string(out), &child); err != nil {
				t.Fatalf("child pid %q: %v", out, err)
			}
			defer killLeftovers(child)
			self, err := readProcStat(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			leader := cmd.Process.Pid
			records := t.TempDir()
			// The leader started before its child; the start recorded for it
			// is what Track saw.
			childStat, err := readProcStat(child)
			if err != nil {
				t.Fatal(err)
			}
			rec := groupRecord{Pid: leader, Pgid: leader, Sid: self.sid, Start: childStat.start, Boot: boot, OwnerPid: deadOwner}
			if err := writeGroupRecord(records, rec); err != nil {
				t.Fatal(err)
			}
			killed, err := KillLeftovers(records)
			if err != nil {
				t.Fatal(err)
			}
			if got := killed == 1; got != tc.wantKilled {
				t.Errorf("KillLeftovers killed %d groups, want the group killed: %v", killed, tc.wantKilled)
			}
			if tc.wantKilled {
				waitUntilGone(t, child)
			} else if processGone(child) {
				t.Error("a process of another session was killed")
			}
			if got := recordNames(t, records); len(got) != 0 {
				t.Errorf("records = %v, want none", got)
			}
		})
	}
}

// startGroup starts a shell command as the leader of a new process group
// that the test kills and reaps when it ends.
func startGroup(t *testing.T, command string) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "exec "+command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// exitedPid is the pid of a process that has exited and been reaped.
func exitedPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func recordNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func readRecord(t *testing.T, path string) groupRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec groupRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("record %s: %v: %s", path, err, data)
	}
	return rec
}
