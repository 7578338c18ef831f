//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agents-os/agents/backend/internal/eventually"
)

// proc is one process as /proc/<pid>/stat describes it.
type proc struct {
	pid, pgrp int
	state     byte
	start     uint64 // clock ticks after boot: tells a reused pid apart
}

// readProc reads /proc/<pid>/stat; ok is false when there is no such
// process.
func readProc(pid int) (p proc, ok bool, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if os.IsNotExist(err) || err == syscall.ESRCH {
		return proc{}, false, nil
	}
	if err != nil {
		return proc{}, false, err
	}
	// "pid (comm) state ppid pgrp …": comm may hold spaces and
	// parentheses, so the fields start after the last ')'.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return proc{}, false, fmt.Errorf("/proc/%d/stat: %q", pid, raw)
	}
	fields := strings.Fields(string(raw[i+1:]))
	if len(fields) < 20 {
		return proc{}, false, fmt.Errorf("/proc/%d/stat: %q", pid, raw)
	}
	p = proc{pid: pid, state: fields[0][0]}
	if p.pgrp, err = strconv.Atoi(fields[2]); err != nil {
		return proc{}, false, fmt.Errorf("/proc/%d/stat pgrp: %w", pid, err)
	}
	if p.start, err = strconv.ParseUint(fields[19], 10, 64); err != nil {
		return proc{}, false, fmt.Errorf("/proc/%d/stat starttime: %w", pid, err)
	}
	return p, true, nil
}

// mustProc returns the live process pid.
func mustProc(t *testing.T, pid int) proc {
	t.Helper()
	p, ok, err := readProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || p.state == 'Z' {
		t.Fatalf("process %d is not running", pid)
	}
	return p
}

// alive reports whether p still runs: the same process (same start
// time), not a zombie waiting to be reaped.
func (p proc) alive(t *testing.T) bool {
	t.Helper()
	now, ok, err := readProc(p.pid)
	if err != nil {
		t.Fatal(err)
	}
	return ok && now.start == p.start && now.state != 'Z'
}

// waitGone waits until none of procs runs; it fails the test, naming the
// survivors, when some still run after the deadline.
func waitGone(t *testing.T, what string, procs ...proc) {
	t.Helper()
	var left []int
	gone := eventually.Holds(eventually.Patience, func() bool {
		left = nil
		for _, p := range procs {
			if p.alive(t) {
				left = append(left, p.pid)
			}
		}
		return len(left) == 0
	})
	if !gone {
		t.Fatalf("%s: processes %v still run", what, left)
	}
}

// killStray kills the processes of procs that still run, so a failing
// test leaves nothing behind.
func killStray(t *testing.T, procs ...proc) {
	t.Helper()
	for _, p := range procs {
		if p.alive(t) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}
