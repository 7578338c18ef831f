//go:build !linux

package bashtool

import "errors"

// Without /proc a process's start time cannot be checked, so a recorded
// pid could not be told from a reused one: nothing is recorded.

type procStat struct {
	state byte
	pgid  int
	sid   int
	start uint64
}

func (s procStat) dead() bool { return true }

func readProcStat(int) (procStat, error) { return procStat{}, errors.ErrUnsupported }

func bootID() (string, error) { return "", errors.ErrUnsupported }

func groupMembers(int) ([]procStat, error) { return nil, errors.ErrUnsupported }

func killRecordedGroup(groupRecord) (bool, error) { return false, errors.ErrUnsupported }
