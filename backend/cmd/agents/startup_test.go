package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// initBudget bounds what package initialisation may allocate: every
// command pays it, `agents serve` and `agents version` alike, so tables
// only one command needs (the TUI's) are built when it runs, not at
// start-up.
const initBudget = 2 << 20

func TestPackageInitialisationAllocatesLittle(t *testing.T) {
	bin, err := agentsBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agents version: %v\n%s", err, stderr.String())
	}
	inits, total := initAllocations(t, stderr.String())
	if len(inits) == 0 {
		t.Fatalf("no inittrace lines in:\n%s", stderr.String())
	}
	if total >= initBudget {
		slices.SortFunc(inits, func(a, b pkgInit) int { return b.bytes - a.bytes })
		var top []string
		for _, p := range inits[:min(8, len(inits))] {
			top = append(top, fmt.Sprintf("%s %d", p.pkg, p.bytes))
		}
		t.Errorf("package initialisation allocates %d bytes, budget %d; the most: %s", total, initBudget, strings.Join(top, ", "))
	}
}

type pkgInit struct {
	pkg   string
	bytes int
}

// initAllocations reads GODEBUG=inittrace=1's lines ("init PKG @0.1 ms,
// 0.2 ms clock, N bytes, M allocs").
func initAllocations(t *testing.T, trace string) ([]pkgInit, int) {
	var inits []pkgInit
	total := 0
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		inits = append(inits, pkgInit{f[1], n})
		total += n
	}
	return inits, total
}
