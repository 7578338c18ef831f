package rsstrim

import (
	"slices"
	"testing"
)

// The maps of an agents server whose binary was replaced on disk while it
// ran (so named "(deleted)"): its code, read-only data and data segment,
// the heap, libc, and another file with the same inode number on another
// device.
const maps = `00400000-0141c000 r-xp 00000000 fe:00 9978196                            /usr/bin/agents (deleted)
0141c000-027e9000 r--p 0101c000 fe:00 9978196                            /usr/bin/agents (deleted)
027e9000-02945000 rw-p 023e9000 fe:00 9978196                            /usr/bin/agents (deleted)
02945000-04bb9000 rw-p 00000000 00:00 0 
87b12800000-87b13000000 rw-p 00000000 00:00 0 
7fbb5fd86000-7fbb5fdac000 r--p 00000000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7fbb5fdac000-7fbb5ff02000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7fbb60000000-7fbb60001000 r--p 00000000 fe:01 9978196                    /mnt/other
7ffd1c5e5000-7ffd1c606000 rw-p 00000000 00:00 0                          [stack]
`

func TestReadOnlyRangesAreTheExecutablesOwn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pc   uint64
		want []span
	}{
		{"code", 0x499240, []span{{0x400000, 0x141c000}, {0x141c000, 0x27e9000}}},
		{"libc", 0x7fbb5fdb0000, []span{{0x7fbb5fd86000, 0x7fbb5fdac000}, {0x7fbb5fdac000, 0x7fbb5ff02000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readOnlyRanges([]byte(maps), tc.pc)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ranges = %x, want %x", got, tc.want)
			}
		})
	}
	if _, err := readOnlyRanges([]byte(maps), 0x87b12800010); err == nil {
		t.Error("an address in an anonymous mapping found a file")
	}
}

// written lives in the data segment, which Release must leave alone.
var written = []int{1, 2, 3}

func TestReleaseKeepsTheProgramRunning(t *testing.T) {
	written[1] = 20
	n, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 && !traced() {
		t.Error("released no mapping of the executable")
	}
	// The code and data are read again from the file; the variables kept.
	if got := []int{written[0], written[1], written[2]}; !slices.Equal(got, []int{1, 20, 3}) {
		t.Errorf("after Release the data segment holds %v, want [1 20 3]", got)
	}
	if again, err := Release(); err != nil || again != n {
		t.Errorf("a second Release = %d, %v; want %d, nil", again, err, n)
	}
}
