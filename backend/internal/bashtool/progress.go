package bashtool

import (
	"bytes"
	"strings"
)

// MaxProgressLine is the most bytes of one progress line passed to
// Env.OnProgress; the rest of a longer line is dropped.
const MaxProgressLine = 1 << 10

// progressLines splits what a script writes to stderr into progress lines
// for report. A line ends at "\n", "\r\n" or a lone "\r" (the way progress
// bars redraw a line); blank lines are skipped. Like capture, it never
// fails a write.
type progressLines struct {
	report func(line string)
	line   []byte // the current line, at most MaxProgressLine bytes
	cut    bool   // bytes of the current line were dropped
}

func newProgressLines(report func(string)) *progressLines {
	return &progressLines{report: report, line: make([]byte, 0, 128)}
}

func (p *progressLines) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		end := bytes.IndexAny(b, "\r\n")
		if end < 0 {
			p.add(b)
			break
		}
		p.add(b[:end])
		p.flush()
		b = b[end+1:]
	}
	return n, nil
}

func (p *progressLines) add(b []byte) {
	room := MaxProgressLine - len(p.line)
	if len(b) > room {
		b, p.cut = b[:room], true
	}
	p.line = append(p.line, b...)
}

// flush reports the current line, if it is not blank, and starts the next.
func (p *progressLines) flush() {
	line := p.line
	if p.cut {
		line = dropPartialRune(line)
	}
	p.line, p.cut = p.line[:0], false
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	text := strings.ToValidUTF8(string(line), "\uFFFD")
	if len(text) > MaxProgressLine { // replacement characters are longer than the bytes they replace
		text = string(dropPartialRune([]byte(text[:MaxProgressLine])))
	}
	p.report(text)
}

// close reports a last line the script did not end.
func (p *progressLines) close() { p.flush() }
