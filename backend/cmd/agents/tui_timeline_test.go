package main

import (
	"regexp"
	"testing"
)

// t in a session shows its run as a text waterfall: the run, the model
// calls and, under the first, the tool call and the helper's call with
// its session; t again brings the transcript back.
func TestTUIShowsARunsTimeline(t *testing.T) {
	t.Parallel()
	term := startChat(t, "boss")
	say(term, "what is the weather, and the sea?")
	term.waitFor("boss heard: aide says: the sea is teal")
	term.waitFor("○ ready")
	term.keys("Escape")
	term.keys("t")
	term.waitFor("timeline of the loaded turns")
	term.waitMatch(regexp.MustCompile(`run 1 · \d\d:\d\d:\d\d · [\d.]+m?s`), "the run's line")
	term.waitMatch(regexp.MustCompile(`bash_weather +·*█+ *[\d.]+m?s`), "the tool call's bar")
	term.waitMatch(regexp.MustCompile(`prompt_agent_aide.* ·*█+ *[\d.]+m?s · ↳[0-9a-f]{8}`), "the helper's call naming its session")
	term.keys("t")
	term.waitGone("timeline of the loaded turns")
	term.waitFor("boss heard: aide says: the sea is teal")
}
