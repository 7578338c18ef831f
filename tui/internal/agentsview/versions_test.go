package agentsview

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

func press(a *Agents, k string) tea.Cmd {
	msg := tea.KeyPressMsg{Text: k, Code: []rune(k)[0]}
	if k == "esc" {
		msg = tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	cmd, _ := a.HandleKey(msg)
	return cmd
}

// v shows a stored agent's versions and what the marked one changed,
// against the version before it; [ and ] move between versions, esc goes
// back to the details; a file agent has none.
func TestVersionsShowWhatEachVersionChanged(t *testing.T) {
	t.Parallel()
	v1 := "{\n  \"name\": \"writer\",\n  \"systemPrompt\": [\"You write.\"]\n}\n"
	v2 := "{\n  \"name\": \"writer\",\n  \"systemPrompt\": [\"You write tersely.\"]\n}\n"
	f := &fakeServer{
		agents: []*agentsv1.AgentDescriptor{
			{Slug: "filed", Source: agentsv1.AgentSource_AGENT_SOURCE_FILE, File: "filed.json"},
			{Slug: "writer", Source: agentsv1.AgentSource_AGENT_SOURCE_STORED, Version: 2},
		},
		versions: map[string][]*agentsv1.AgentVersion{"writer": {
			{Slug: "writer", Version: 2, Definition: v2, Current: true, Author: "ana"},
			{Slug: "writer", Version: 1, Definition: v1, Author: "ana"},
		}},
	}
	a := New(t.Context(), f, theme.New(true), keys.Default())
	a.Handle(a.Refresh()())
	view := func() string { return ansi.Strip(a.Render(120, 30)) }

	if st, ok := press(a, "v")().(msgs.Status); !ok || st.Err == nil || !strings.Contains(st.Err.Error(), "file agent") || a.ShowingVersions() {
		t.Fatalf("v on a file agent: %+v, showing %v; want it refused", st, a.ShowingVersions())
	}
	press(a, "j")
	a.Handle(press(a, "v")())
	if !a.ShowingVersions() {
		t.Fatal("v on a stored agent shows no versions")
	}
	out := view()
	for _, want := range []string{"Versions of writer", "› v2", "current", "What v2 changed", `-  "systemPrompt": ["You write."]`, `+  "systemPrompt": ["You write tersely."]`} {
		if !strings.Contains(out, want) {
			t.Errorf("versions lack %q:\n%s", want, out)
		}
	}
	press(a, "[")
	if out := view(); !strings.Contains(out, "› v1") || !strings.Contains(out, "v1 is the first version") || !strings.Contains(out, `"You write."`) {
		t.Errorf("[ does not show the first version whole:\n%s", out)
	}
	press(a, "]")
	if out := view(); !strings.Contains(out, "› v2") {
		t.Errorf("] does not go back to v2:\n%s", out)
	}

	// A rollback elsewhere: the list follows, and stays on v2.
	f.mu.Lock()
	f.versions["writer"] = append([]*agentsv1.AgentVersion{{Slug: "writer", Version: 3, Definition: v1, Current: true, Author: "bo", RestoredFrom: 1}}, f.versions["writer"]...)
	f.versions["writer"][1].Current = false
	f.mu.Unlock()
	cmd := a.Handle(msgs.Event{Event: &agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}}})
	for _, m := range cmd().(tea.BatchMsg) {
		a.Handle(m())
	}
	if out := view(); !strings.Contains(out, "v3") || !strings.Contains(out, "restored from v1") || !strings.Contains(out, "› v2") {
		t.Errorf("after a rollback elsewhere:\n%s", out)
	}
	press(a, "]")
	if out := view(); !strings.Contains(out, "What v3 changed") || !strings.Contains(out, `+  "systemPrompt": ["You write."]`) {
		t.Errorf("v3's change:\n%s", out)
	}

	press(a, "esc")
	if a.ShowingVersions() || strings.Contains(view(), "Versions of") {
		t.Errorf("esc leaves the versions shown:\n%s", view())
	}
}

// A changed line wider than the pane wraps: the change near its end shows.
func TestALongChangedLineWraps(t *testing.T) {
	t.Parallel()
	long := "You are a careful researcher who reads the sources twice. Answer the question you are given in "
	v1 := "{\n  \"systemPrompt\": [\"" + long + "three sentences.\"]\n}\n"
	v2 := "{\n  \"systemPrompt\": [\"" + long + "two sentences.\"]\n}\n"
	f := &fakeServer{
		agents: []*agentsv1.AgentDescriptor{{Slug: "scribe", Source: agentsv1.AgentSource_AGENT_SOURCE_STORED, Version: 2}},
		versions: map[string][]*agentsv1.AgentVersion{"scribe": {
			{Slug: "scribe", Version: 2, Definition: v2, Current: true},
			{Slug: "scribe", Version: 1, Definition: v1},
		}},
	}
	a := New(t.Context(), f, theme.New(true), keys.Default())
	a.Handle(a.Refresh()())
	a.Handle(press(a, "v")())
	out := ansi.Strip(a.Render(100, 40))
	for _, want := range []string{"three sentences", "two sentences"} {
		if !strings.Contains(out, want) {
			t.Errorf("the change lacks %q:\n%s", want, out)
		}
	}
}
