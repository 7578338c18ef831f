package bashtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Reaper records on disk the process group of every running tool, so that
// a server started after a crash can kill what the previous one left
// running (KillLeftovers). A nil *Reaper records nothing.
//
// A server that is killed takes its tools' scripts with it: on Linux each
// script is started with a parent-death signal (SIGKILL). What the scripts
// started in the background stays in their process groups, alive, until
// the next server calls KillLeftovers on the same directory.
//
// Recording needs Linux's /proc; elsewhere NewReaper returns a Reaper that
// records nothing.
type Reaper struct {
	dir        string
	log        *slog.Logger
	boot       string // the boot id; "" when recording is not supported
	ownerPid   int
	ownerStart uint64
}

// NewReaper records the process groups of tools in dir, which the first
// record creates when needed (a server that runs no tool neither waits for
// nor leaves an empty directory). Call KillLeftovers(dir) first, at server
// start. Failures to
// record or remove a record go to log (nil discards them); they never fail
// a tool call.
func NewReaper(dir string, log *slog.Logger) (*Reaper, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Reaper{dir: dir, log: log}
	boot, err := bootID()
	if errors.Is(err, errors.ErrUnsupported) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tool process records: %w", err)
	}
	self, err := readProcStat(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("tool process records: %w", err)
	}
	r.boot, r.ownerPid, r.ownerStart = boot, os.Getpid(), self.start
	return r, nil
}

// Track records the process group led by pid, a child of this process that
// has not been waited for yet (so its pid cannot have been reused).
func (r *Reaper) Track(pid int) error {
	if r == nil || r.boot == "" {
		return nil
	}
	stat, err := readProcStat(pid)
	if err != nil {
		return fmt.Errorf("record process group %d: %w", pid, err)
	}
	rec := groupRecord{
		Pid: pid, Pgid: pid, Sid: stat.sid, Start: stat.start, Boot: r.boot,
		OwnerPid: r.ownerPid, OwnerStart: r.ownerStart,
	}
	if err := writeGroupRecord(r.dir, rec); err != nil {
		return fmt.Errorf("record process group %d: %w", pid, err)
	}
	return nil
}

// Untrack removes the record of the group led by pid, once nothing of the
// group runs any more.
func (r *Reaper) Untrack(pid int) error {
	if r == nil || r.boot == "" {
		return nil
	}
	err := os.Remove(recordPath(r.dir, pid))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the record of process group %d: %w", pid, err)
	}
	return nil
}

// track and untrack are Track and Untrack for Run: a failure is logged,
// and the call goes on.
func (r *Reaper) track(pid int) {
	if err := r.Track(pid); err != nil {
		r.log.Error("tool process group not recorded: a crash would leave it running", "pid", pid, "err", err)
	}
}

func (r *Reaper) untrack(pid int) {
	if err := r.Untrack(pid); err != nil {
		r.log.Error("tool process record not removed", "pid", pid, "err", err)
	}
}

// groupRecord is the file recording one running process group.
type groupRecord struct {
	Pid   int    `json:"pid"`   // the script, the leader of the group
	Pgid  int    `json:"pgid"`  // the group: the script's pid
	Sid   int    `json:"sid"`   // the session the group belongs to (the server's)
	Start uint64 `json:"start"` // start time of the script, in clock ticks after boot
	Boot  string `json:"boot"`  // the boot id the pids and times belong to
	// OwnerPid and OwnerStart identify the server that ran the script.
	OwnerPid   int    `json:"ownerPid"`
	OwnerStart uint64 `json:"ownerStart"`
}

const (
	recordSuffix    = ".json"
	recordTmpPrefix = ".tmp-"
)

func recordPath(dir string, pgid int) string {
	return filepath.Join(dir, strconv.Itoa(pgid)+recordSuffix)
}

// writeGroupRecord writes rec whole or not at all: a crash while writing
// leaves a temporary file KillLeftovers removes, never a partial record.
func writeGroupRecord(dir string, rec groupRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, recordTmpPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		tmp, err = os.CreateTemp(dir, recordTmpPrefix+"*")
	}
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), recordPath(dir, rec.Pgid))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// KillLeftovers kills the tool process groups recorded in dir by servers
// that are no longer running, and removes their records; call it at server
// start, before any tool runs. It returns how many groups it killed.
//
// A group is killed only when it is provably the recorded one: same boot,
// and either its leader is alive with the recorded start time, or — the
// leader having died — every process left in the group belongs to the
// recorded session and started after the leader did. A pid the system has
// since given to another process is never signalled. Records of a server
// still running (another server sharing dir) are left alone. A missing dir
// is no error.
func KillLeftovers(dir string) (killed int, err error) {
	boot, err := bootID()
	if errors.Is(err, errors.ErrUnsupported) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("kill leftover tool processes: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("kill leftover tool processes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), recordTmpPrefix) {
			errs = append(errs, removeRecord(path))
			continue
		}
		if !strings.HasSuffix(e.Name(), recordSuffix) {
			continue // not ours
		}
		rec, err := readGroupRecord(path)
		if err != nil {
			errs = append(errs, err, removeRecord(path))
			continue
		}
		if rec.Boot == boot && ownerRunning(rec) {
			continue
		}
		if rec.Boot == boot {
			done, err := killRecordedGroup(rec)
			if err != nil {
				errs = append(errs, fmt.Errorf("process group %d: %w", rec.Pgid, err))
				continue // keep the record: a later start may succeed
			}
			if done {
				killed++
			}
		}
		errs = append(errs, removeRecord(path))
	}
	if err := errors.Join(errs...); err != nil {
		return killed, fmt.Errorf("kill leftover tool processes: %w", err)
	}
	return killed, nil
}

func readGroupRecord(path string) (groupRecord, error) {
	var rec groupRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Pid <= 0 || rec.Pgid <= 0 {
		return rec, fmt.Errorf("%s: not a process group record", path)
	}
	return rec, nil
}

func removeRecord(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ownerRunning reports whether the server that wrote rec is still alive.
func ownerRunning(rec groupRecord) bool {
	stat, err := readProcStat(rec.OwnerPid)
	return err == nil && !stat.dead() && stat.start == rec.OwnerStart
}
