package rsstrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
)

// Release unmaps the pages of the executable's read-only mappings (code,
// read-only data, the function tables), which the process faults in
// again from the page cache as it runs them, and returns the bytes of
// the mappings it advised. The writable data segment is left alone: its
// pages may hold the program's variables. Under a debugger Release does
// nothing, as unmapping would drop the breakpoints written into the code.
func Release() (int64, error) {
	if traced() {
		return 0, nil
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	ranges, err := readOnlyRanges(maps, uint64(reflect.ValueOf(Release).Pointer()))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range ranges {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(r.start), uintptr(r.end-r.start), syscall.MADV_DONTNEED); errno != 0 {
			return n, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, errno)
		}
		n += int64(r.end - r.start)
	}
	return n, nil
}

// span is one mapping's address range.
type span struct{ start, end uint64 }

// readOnlyRanges finds, in the text of /proc/self/maps, the mapping that
// holds the address pc (the executable's code) and returns it with every
// other private, read-only mapping of the same file (same device and
// inode, so a binary replaced or deleted on disk still matches).
func readOnlyRanges(maps []byte, pc uint64) ([]span, error) {
	type mapping struct {
		span
		perms, file string
	}
	var all []mapping
	file := ""
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode [path]
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/self/maps: bad range %q", f[0])
		}
		m := mapping{span{start, end}, f[1], f[3] + " " + f[4]}
		if f[4] == "0" {
			m.file = "" // anonymous
		}
		all = append(all, m)
		if start <= pc && pc < end {
			file = m.file
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if file == "" {
		return nil, fmt.Errorf("/proc/self/maps: no file mapping holds the code at %#x", pc)
	}
	var out []span
	for _, m := range all {
		if m.file == file && len(m.perms) == 4 && m.perms[0] == 'r' && m.perms[1] == '-' && m.perms[3] == 'p' {
			out = append(out, m.span)
		}
	}
	return out, nil
}

// traced reports whether a debugger (or any tracer) is attached.
func traced() bool {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}
