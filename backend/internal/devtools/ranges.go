package devtools

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// rangeKind is one of agents-exe's range forms.
type rangeKind int

const (
	rangeLines rangeKind = iota // N or N-M
	rangeAfter                  // N+: after line N
	rangeHead                   // before line 1
	rangeTail                   // after the last line
	rangeWhole                  // the whole file
)

// lineRange is one range of a "ranges" argument; lines are 1-based and
// inclusive.
type lineRange struct {
	kind     rangeKind
	from, to int
}

// parseRanges reads "1-10,20,30+,head,tail,whole"; "" is the whole file.
func parseRanges(text string) ([]lineRange, error) {
	if strings.TrimSpace(text) == "" {
		return []lineRange{{kind: rangeWhole}}, nil
	}
	var out []lineRange
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "head":
			out = append(out, lineRange{kind: rangeHead})
		case part == "tail":
			out = append(out, lineRange{kind: rangeTail})
		case part == "whole":
			out = append(out, lineRange{kind: rangeWhole})
		case strings.HasSuffix(part, "+"):
			n, err := lineNumber(strings.TrimSuffix(part, "+"))
			if err != nil {
				return nil, err
			}
			out = append(out, lineRange{kind: rangeAfter, from: n, to: n})
		default:
			a, b, isSpan := strings.Cut(part, "-")
			from, err := lineNumber(a)
			if err != nil {
				return nil, err
			}
			to := from
			if isSpan {
				if to, err = lineNumber(b); err != nil {
					return nil, err
				}
			}
			if to < from {
				return nil, fmt.Errorf("range %q ends before it starts", part)
			}
			out = append(out, lineRange{kind: rangeLines, from: from, to: to})
		}
	}
	return out, nil
}

func lineNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a line number (lines count from 1; ranges are like 5, 1-10, 20+, head, tail, whole)", s)
	}
	return n, nil
}

// readSpan is the lines a range reads in a file of total lines, clamped
// to the file; from > to when it reads none.
func (r lineRange) readSpan(total int) (from, to int) {
	switch r.kind {
	case rangeLines:
		return r.from, min(r.to, total)
	case rangeAfter:
		return r.from, total
	}
	return 1, total
}

// applyRanges replaces each range of lines with its block, the ranges
// judged against the lines as given (top to bottom, each shifted by the
// edits above it), and returns the new lines and how many lines the
// blocks hold.
func applyRanges(lines []string, ranges []lineRange, blocks []string) ([]string, int, error) {
	type edit struct {
		start, end int // the 0-based lines [start, end) replaced
		with       []string
	}
	edits := make([]edit, 0, len(ranges))
	written := 0
	for i, r := range ranges {
		with := blockLines(blocks[i])
		written += len(with)
		var e edit
		switch r.kind {
		case rangeHead:
			e = edit{0, 0, with}
		case rangeTail:
			e = edit{len(lines), len(lines), with}
		case rangeWhole:
			e = edit{0, len(lines), with}
		case rangeAfter:
			if r.from > len(lines) {
				return nil, 0, fmt.Errorf("line %d is past the end of the file (%d lines)", r.from, len(lines))
			}
			e = edit{r.from, r.from, with}
		case rangeLines:
			if r.to > len(lines) {
				return nil, 0, fmt.Errorf("range %d-%d is past the end of the file (%d lines)", r.from, r.to, len(lines))
			}
			e = edit{r.from - 1, r.to, with}
		}
		edits = append(edits, e)
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	for i := 1; i < len(edits); i++ {
		if edits[i].start < edits[i-1].end {
			return nil, 0, fmt.Errorf("ranges overlap")
		}
	}
	out := make([]string, 0, len(lines)+written)
	at := 0
	for _, e := range edits {
		out = append(out, lines[at:e.start]...)
		out = append(out, e.with...)
		at = e.end
	}
	out = append(out, lines[at:]...)
	return out, written, nil
}

// blockLines is a content block as lines: "" is none (the range is
// deleted), and a final line end starts no line.
func blockLines(block string) []string {
	if block == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}
