package bashtool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what /proc/<pid>/stat says about a process.
type procStat struct {
	state byte   // R, S, D, Z (zombie), X (dead), ...
	pgid  int    // process group
	sid   int    // session
	start uint64 // start time, in clock ticks after boot
}

func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' }

// readProcStat reads /proc/<pid>/stat; an error wrapping fs.ErrNotExist
// means there is no such process.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

// parseProcStat reads "pid (comm) state ppid pgrp session ... starttime
// ...": comm may contain spaces and parentheses, so fields are counted
// from the last ")". starttime is field 22 of proc(5), the 20th after it.
func parseProcStat(data []byte) (procStat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(data[end+1:]))
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	pgid, err1 := strconv.Atoi(fields[2])
	sid, err2 := strconv.Atoi(fields[3])
	start, err3 := strconv.ParseUint(fields[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: %w", err)
	}
	return procStat{state: fields[0][0], pgid: pgid, sid: sid, start: start}, nil
}

// bootID tells one boot of the system from another: pids and start times
// mean nothing across a reboot.
func bootID() (string, error) {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// groupMembers lists the live processes of a process group.
func groupMembers(pgid int) ([]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var members []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := readProcStat(pid)
		if err != nil {
			continue // gone meanwhile
		}
		if stat.pgid == pgid && !stat.dead() {
			members = append(members, stat)
		}
	}
	return members, nil
}

// killRecordedGroup kills the group of rec if it is still the recorded
// one; killed says whether something of it was still running.
func killRecordedGroup(rec groupRecord) (killed bool, err error) {
	leader, err := readProcStat(rec.Pid)
	switch {
	case err == nil && leader.start != rec.Start:
		// The pid was reused, which the system does only once the group
		// is gone.
		return false, nil
	case err == nil:
		// The leader itself, alive (it escaped the parent-death signal)
		// or a zombie not reaped yet: kill it even if it left its group.
		if err := syscall.Kill(rec.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return false, err
		}
		killed = !leader.dead()
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	default:
		// The leader is gone. Its group id is free for reuse once the
		// group is empty, so check that what is left is the recorded
		// group: processes of the server's session that the script could
		// have started.
		members, err := groupMembers(rec.Pgid)
		if err != nil {
			return false, err
		}
		if len(members) == 0 {
			return false, nil
		}
		for _, m := range members {
			if m.sid != rec.Sid || m.start < rec.Start {
				return false, nil
			}
		}
	}
	switch err := syscall.Kill(-rec.Pgid, syscall.SIGKILL); {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return killed, nil
	default:
		return killed, err
	}
}
