package agentsview

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// A stored agent's history, in the descriptor's place: its versions, and
// what one of them changed, as a unified diff against the version before
// it (the web app's version diff, and `agents agents diff`).

// history is the history shown for one agent.
type history struct {
	slug string
	// versions are newest first, as ListAgentVersions answers.
	versions []*agentsv1.AgentVersion
	// at is the index in versions of the version whose change is shown.
	at     int
	loaded bool
}

// versionsFetched is ListAgentVersions' answer.
type versionsFetched struct {
	slug     string
	versions []*agentsv1.AgentVersion
	err      error
}

func (versionsFetched) reply() {}

// ShowingVersions reports whether the history takes the descriptor's place.
func (m *Agents) ShowingVersions() bool { return m.history != nil }

// toggleVersions shows the selected stored agent's history, or hides it.
func (m *Agents) toggleVersions() tea.Cmd {
	if m.history != nil {
		m.closeVersions()
		return nil
	}
	a := m.selected()
	switch {
	case a == nil:
		return nil
	case a.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED:
		return msgs.Say("", fmt.Errorf("%s has no versions: a file agent (%s)", a.GetSlug(), a.GetFile()))
	}
	m.history = &history{slug: a.GetSlug()}
	m.scroll, m.detail.agent = 0, nil
	return m.fetchVersions()
}

// closeVersions puts the details back in the history's place.
func (m *Agents) closeVersions() {
	m.history, m.scroll, m.detail.agent = nil, 0, nil
}

// fetchVersions asks for the history's versions.
func (m *Agents) fetchVersions() tea.Cmd {
	ctx, c, slug := m.ctx, m.c, m.history.slug
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, editTimeout)
		defer cancel()
		res, err := c.ListAgentVersions(ctx, connect.NewRequest(&agentsv1.ListAgentVersionsRequest{Slug: slug}))
		if err != nil {
			return versionsFetched{slug: slug, err: err}
		}
		return versionsFetched{slug: slug, versions: res.Msg.GetVersions()}
	}
}

// takeVersions keeps the versions fetched for the history shown; the
// change shown stays on the version it was on, or is the newest.
func (m *Agents) takeVersions(msg versionsFetched) tea.Cmd {
	h := m.history
	if h == nil || h.slug != msg.slug {
		return nil
	}
	if msg.err != nil {
		m.closeVersions()
		return msgs.Say("", fmt.Errorf("versions of %s: %w", msg.slug, client.Describe(msg.err)))
	}
	var was int64
	if h.loaded && h.at < len(h.versions) {
		was = h.versions[h.at].GetVersion()
	}
	h.versions, h.at, h.loaded = msg.versions, 0, true
	for i, v := range h.versions {
		if v.GetVersion() == was {
			h.at = i
		}
	}
	m.detail.agent = nil // drawn again
	return nil
}

// stepVersion shows the change of an older (+1) or newer (-1) version.
func (m *Agents) stepVersion(by int) {
	h := m.history
	if h == nil || !h.loaded {
		return
	}
	if at := h.at + by; at >= 0 && at < len(h.versions) {
		h.at = at
		m.scroll = 0
		m.detail.agent = nil
	}
}

// renderHistory draws the history in w cells: a line for each version,
// the one shown marked, then its change.
func renderHistory(st theme.AppStyles, h *history, w int) string {
	if !h.loaded {
		return st.Muted.Render("loading the versions of " + h.slug + "…")
	}
	if len(h.versions) == 0 {
		return st.Muted.Render(h.slug + " has no stored versions.")
	}
	var b strings.Builder
	b.WriteString(st.Heading.Render("Versions of "+h.slug) + "\n")
	for i, v := range h.versions {
		pointer := "  "
		if i == h.at {
			pointer = "› "
		}
		line := fmt.Sprintf("v%d  %s  %s", v.GetVersion(), v.GetCreateTime().AsTime().Local().Format(time.DateTime), v.GetAuthor())
		if v.GetCurrent() {
			line += "  current"
		}
		if from := v.GetRestoredFrom(); from > 0 {
			line += fmt.Sprintf("  restored from v%d", from)
		}
		style := st.Title
		if i != h.at {
			style = st.Muted
		}
		b.WriteString(st.Heading.Render(pointer) + style.Render(line) + "\n")
	}
	b.WriteString("\n")
	shown := h.versions[h.at]
	var before *agentsv1.AgentVersion
	if h.at+1 < len(h.versions) {
		before = h.versions[h.at+1]
	}
	if before == nil {
		b.WriteString(st.Muted.Render(fmt.Sprintf("v%d is the first version: its whole definition.", shown.GetVersion())) + "\n")
		for line := range strings.Lines(client.DiffableDefinition(shown.GetDefinition())) {
			for _, part := range wrap(strings.TrimRight(line, "\n"), w) {
				b.WriteString(st.Title.Render(part) + "\n")
			}
		}
		return b.String()
	}
	diff := udiff.Unified(fmt.Sprintf("v%d", before.GetVersion()), fmt.Sprintf("v%d", shown.GetVersion()),
		client.DiffableDefinition(before.GetDefinition()), client.DiffableDefinition(shown.GetDefinition()))
	if diff == "" {
		b.WriteString(st.Muted.Render(fmt.Sprintf("v%d has the same definition as v%d.", shown.GetVersion(), before.GetVersion())) + "\n")
		return b.String()
	}
	b.WriteString(st.Heading.Render(fmt.Sprintf("What v%d changed", shown.GetVersion())) + "\n")
	for line := range strings.Lines(diff) {
		line = strings.TrimRight(line, "\n")
		style := st.Title
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "@@"):
			style = st.Muted
		case strings.HasPrefix(line, "+"):
			style = st.Running
		case strings.HasPrefix(line, "-"):
			style = st.Failed
		}
		for _, part := range wrap(line, w) {
			b.WriteString(style.Render(part) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// wrap cuts a line of a definition or its diff into lines of w cells, so
// a change near the end of a long line (a prompt) shows; the pieces keep
// the line's colour.
func wrap(line string, w int) []string {
	if w <= 0 || ansi.StringWidth(line) <= w {
		return []string{line}
	}
	return strings.Split(ansi.Hardwrap(line, w, true), "\n")
}
