package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/theme"
)

func TestAgentPickerFiltersOnAShiftedLetter(t *testing.T) {
	m, _ := started(t, 80, 24)
	press(m, "ctrl+n")
	typeText(m, "P")
	frame := ansi.Strip(view(t, m))
	_, picker, _ := strings.Cut(frame, "New session with which agent?")
	if !strings.Contains(picker, "planner") || strings.Contains(picker, "coder") {
		t.Fatalf("typing P should leave only planner; the screen shows:\n%s", frame)
	}
}

func TestAgentPickerFiltersOnShiftedPunctuation(t *testing.T) {
	agents := []*agentsv1.AgentDescriptor{{Slug: "coder"}, {Slug: "db_admin"}}
	p := &agentPicker{th: theme.New(true), km: keys.Default(), agents: func() []*agentsv1.AgentDescriptor { return agents }}
	// shift+- as a terminal speaking the kitty keyboard protocol reports it.
	p.HandleKey(tea.KeyPressMsg{Code: '-', ShiftedCode: '_', Text: "_", Mod: tea.ModShift})
	if shown := p.shown(); len(shown) != 1 || shown[0].GetSlug() != "db_admin" {
		t.Fatalf("filter %q shows %v, want only db_admin", p.filter, shown)
	}
}

func TestAgentPickerBackspaceErasesAWholeCharacter(t *testing.T) {
	agents := []*agentsv1.AgentDescriptor{{Slug: "résumé"}, {Slug: "coder"}}
	p := &agentPicker{th: theme.New(true), km: keys.Default(), agents: func() []*agentsv1.AgentDescriptor { return agents }}
	p.HandleKey(keyPress("r"))
	p.HandleKey(keyPress("é"))
	p.HandleKey(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if p.filter != "r" {
		t.Fatalf("filter %q after backspace, want %q", p.filter, "r")
	}
}

// The picker's footer offers only the keys that move in it: j and k type
// into its filter.
func TestAgentPickerOffersNoLetterToMove(t *testing.T) {
	p := &agentPicker{th: theme.New(true), km: keys.Default(), agents: func() []*agentsv1.AgentDescriptor { return nil }}
	var got []string
	for _, b := range p.Keys() {
		got = append(got, b.Help().Key+" "+b.Help().Desc)
	}
	footer := strings.Join(got, " · ")
	if !strings.Contains(footer, "up/down move") || strings.Contains(footer, "/k") {
		t.Errorf("footer %q, want up/down move and no letter", footer)
	}
}
