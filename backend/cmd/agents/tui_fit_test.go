//go:build unix

package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The sizes the TUI is held to beside the tests' usual one: the smallest
// terminal it promises to work in, and a roomy one.
var tuiSizes = []struct{ cols, rows int }{{80, 24}, {120, 40}}

// eachSize runs fn in an embedded TUI of each size.
func eachSize(t *testing.T, fn func(t *testing.T, term *tmuxTerm, cols int), extra ...string) {
	for _, size := range tuiSizes {
		t.Run(fmt.Sprintf("%dx%d", size.cols, size.rows), func(t *testing.T) {
			t.Parallel()
			term := newTUIFixture(t).embeddedSized(t, size.cols, size.rows, extra...)
			fn(t, term, size.cols)
		})
	}
}

// screenLines is a captured screen as its lines, trailing spaces cut.
func screenLines(screen string) []string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// keysLine is the line of keys above the status bar.
func keysLine(screen string) string {
	lines := screenLines(screen)
	return lines[len(lines)-2]
}

// statusLine is the status bar, the screen's last line.
func statusLine(screen string) string {
	lines := screenLines(screen)
	return lines[len(lines)-1]
}

// A helper call's arguments read as text while the model writes them,
// not as the escaped JSON the model streams.
func TestTUIShowsStreamingArgumentsAsText(t *testing.T) {
	t.Parallel()
	eachSize(t, func(t *testing.T, term *tmuxTerm, cols int) {
		newChat(term, "boss")
		say(term, "quote me")
		screen := term.waitFor(">> What time")
		// Still streaming: the call is not complete yet.
		if strings.Contains(screen, "looking at his watch once more") {
			t.Skip("the call was complete before the screen was read; nothing streamed to look at")
		}
		// Read as it streams, to the call's end.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(screen, "✓ helper aide") {
			if strings.Contains(screen, `\u003e`) || strings.Contains(screen, `{"prompt"`) {
				t.Fatalf("the streaming arguments show as JSON:\n%s", screen)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the call did not end within 30s:\n%s", screen)
			}
			time.Sleep(50 * time.Millisecond)
			screen = term.capture()
		}
	}, "-a", "boss")
}

// q quits from the list and the transcript, is a letter in the composer,
// and the line of keys always ends with the quit key that works there.
func TestTUIQuitsWithQWhereNothingIsTyped(t *testing.T) {
	t.Parallel()
	eachSize(t, func(t *testing.T, term *tmuxTerm, cols int) {
		screen := term.waitFor("connected")
		if line := keysLine(screen); !strings.HasSuffix(line, "q quit") {
			t.Fatalf("the list's line of keys does not end with q quit: %q", line)
		}
		newChat(term, "chat")
		screen = term.capture()
		if line := keysLine(screen); !strings.HasSuffix(line, "ctrl+c quit") {
			t.Fatalf("in the composer, the line of keys does not end with ctrl+c quit: %q", line)
		}
		term.typeText("q")
		term.waitFor("│ q")
		term.keys("BSpace", "Escape")
		screen = term.waitMatch(regexp.MustCompile(`q quit\s*\n.*\n?$`), "q quit on the transcript")
		if line := keysLine(screen); !strings.HasSuffix(line, "q quit") {
			t.Fatalf("on the transcript the line of keys does not end with q quit: %q", line)
		}
		term.keys("q")
		if code := term.exitStatus(); code != 0 {
			t.Fatalf("q: exit status %d:\n%s", code, term.capture())
		}
	}, "-a", "chat")
}

// On the smallest terminal the composer's placeholder and the status bar
// give way by whole hints and whole words, never in the middle of one.
func TestTUIFitsHintsByWholeWords(t *testing.T) {
	t.Parallel()
	eachSize(t, func(t *testing.T, term *tmuxTerm, cols int) {
		newChat(term, "chat")
		screen := term.capture()
		hints := []string{"Write a message", "enter sends", "shift+enter new line", "ctrl+t attach", "ctrl+v editor"}
		var composer string
		for _, l := range screenLines(screen) {
			if strings.HasPrefix(l, "│ Write a message") {
				composer = strings.TrimPrefix(l, "│ ")
			}
		}
		if composer == "" {
			t.Fatalf("no placeholder:\n%s", screen)
		}
		if !wholeParts(composer, hints) {
			t.Errorf("the placeholder %q is not made of whole hints", composer)
		}
		if cols >= 120 && composer != strings.Join(hints, " · ") {
			t.Errorf("at %d columns the placeholder %q leaves out hints that fit", cols, composer)
		}
		// A control of a session not started yet says why it did nothing,
		// at a length the status bar cannot hold at 80 columns.
		term.keys("C-p")
		const why = "the session starts with its first message"
		screen = term.waitMatch(regexp.MustCompile(`(?m)^ the session`), "the status")
		left, _, _ := strings.Cut(statusLine(screen), "●")
		left = strings.TrimSpace(left)
		if left != why && !(strings.HasSuffix(left, "…") && strings.HasPrefix(why, strings.TrimSuffix(left, "…")+" ")) {
			t.Errorf("the status %q is cut inside a word of %q", left, why)
		}
		if line := keysLine(screen); !strings.HasSuffix(line, "quit") {
			t.Errorf("the line of keys lost its quit key: %q", line)
		}
	}, "-a", "chat")
}

// The session list says when each session last changed.
func TestTUIListsWhenSessionsChanged(t *testing.T) {
	t.Parallel()
	eachSize(t, func(t *testing.T, term *tmuxTerm, cols int) {
		newChat(term, "chat")
		say(term, "hi there")
		term.waitFor("hello from chat: hi there")
		term.keys("Escape", "Escape")
		screen := term.waitFor("when")
		if !regexp.MustCompile(`(?m)hi there.*chat\s+2\s+(now|\d+s)$`).MatchString(strings.Join(screenLines(screen), "\n")) {
			t.Fatalf("the session's row does not say when it changed:\n%s", screen)
		}
	}, "-a", "chat")
}

// wholeParts reports whether line is some of parts, from the first,
// joined with " · ".
func wholeParts(line string, parts []string) bool {
	for n := len(parts); n >= 1; n-- {
		if line == strings.Join(parts[:n], " · ") {
			return true
		}
	}
	return false
}
