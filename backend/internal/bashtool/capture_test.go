package bashtool

import (
	"strings"
	"testing"
)

func TestCaptureKeepsEverythingUnderTheCap(t *testing.T) {
	c := newCapture(10)
	_, _ = c.Write([]byte("hello"))
	_, _ = c.Write([]byte("world"))
	if c.truncated() || c.text() != "helloworld" {
		t.Errorf("text = %q, truncated = %v", c.text(), c.truncated())
	}
}

func TestCaptureCutsAndSaysHowMuch(t *testing.T) {
	c := newCapture(4)
	n, err := c.Write([]byte("abcdef\n"))
	if n != 7 || err != nil {
		t.Errorf("Write = %d, %v; a capture must accept everything", n, err)
	}
	want := "abcd\n[output truncated: 3 of 7 bytes cut, only the first 4 bytes are shown]"
	if !c.truncated() || c.text() != want {
		t.Errorf("text = %q, want %q", c.text(), want)
	}
}

func TestCaptureDoesNotSplitACharacter(t *testing.T) {
	c := newCapture(5)
	_, _ = c.Write([]byte("abcd✓✓")) // ✓ is three bytes; the cap falls inside the first
	want := "abcd\n[output truncated: 6 of 10 bytes cut, only the first 4 bytes are shown]"
	if c.text() != want {
		t.Errorf("text = %q, want %q", c.text(), want)
	}
}

func TestCaptureReplacesInvalidUTF8(t *testing.T) {
	c := newCapture(100)
	_, _ = c.Write([]byte("ok \xff\xfe end"))
	if got := c.text(); got != "ok \uFFFD end" {
		t.Errorf("text = %q", got)
	}
	if !strings.Contains(c.text(), "end") {
		t.Error("text after invalid bytes was lost")
	}
}
