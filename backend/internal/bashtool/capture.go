package bashtool

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capture keeps the first max bytes written to it and counts the rest, so
// a script can write as much as it likes without the server holding it all.
// It never fails a write: the script must not block or die on a full pipe.
type capture struct {
	max   int
	kept  []byte
	total int64
}

func newCapture(max int) *capture {
	return &capture{max: max}
}

func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.max - len(c.kept); room > 0 {
		c.kept = append(c.kept, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Cut is text cut to max bytes as a bash tool's output is, with the same
// note saying how much was cut: for other tools whose results the model
// reads under the same cap.
func Cut(text string, max int) string {
	c := newCapture(max)
	_, _ = c.Write([]byte(text))
	return c.text()
}

// truncated reports whether bytes were dropped.
func (c *capture) truncated() bool { return c.total > int64(len(c.kept)) }

// text is the kept output as valid UTF-8 (invalid bytes become U+FFFD, as
// agents-exe does), followed by a note when the output was cut.
func (c *capture) text() string {
	kept := c.kept
	if c.truncated() {
		kept = dropPartialRune(kept)
	}
	s := strings.ToValidUTF8(string(kept), "\uFFFD")
	if !c.truncated() {
		return s
	}
	cut := c.total - int64(len(kept))
	if !strings.HasSuffix(s, "\n") && s != "" {
		s += "\n"
	}
	return s + fmt.Sprintf("[output truncated: %d of %d bytes cut, only the first %d bytes are shown]",
		cut, c.total, len(kept))
}

// dropPartialRune removes a multi-byte character the cap cut in half, so
// the cut does not show up as a replacement character.
func dropPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
