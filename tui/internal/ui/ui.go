// Package ui is the terminal UI's one bubbletea model: it owns the
// state, the focus and the layout, and routes every message to its owner
// — keys to whatever holds the keyboard, an event to the lists, the
// drafts and the screens of its session, the answer of a command to the
// component that asked. The tabs (Chats, Agents, History, Schedules,
// Webhooks, Help) and the
// conversations opened over them are components drawn into the frame
// this package draws: tab bar, body, status bar.
package ui

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/agentsview"
	"github.com/agents-os/agents/tui/internal/chats"
	"github.com/agents-os/agents/tui/internal/conversation"
	"github.com/agents-os/agents/tui/internal/help"
	"github.com/agents-os/agents/tui/internal/history"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/schedulesview"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/webhooksview"
)

// Config is what the shell is built from.
type Config struct {
	// Ctx bounds every call the TUI makes.
	Ctx context.Context
	// Client is the server; link.New makes one of the protocol's client.
	Client Client
	Keys   *keys.Map
	// SessionID opens this session at start.
	SessionID string
	// StopOnQuit sends a StopRun mail, on quit, to each session this TUI
	// started that is still running.
	StopOnQuit bool
	Log        *slog.Logger
	// Now is the clock the session lists measure ages with; time.Now
	// when nil.
	Now func() time.Time
	// Redraw, when set, redraws the screen that often, so the ages the
	// lists show ("15s", "4m") stay true while nothing else happens.
	Redraw time.Duration
}

type tab int

const (
	chatsTab tab = iota
	agentsTab
	historyTab
	schedulesTab
	webhooksTab
	helpTab
	tabCount
)

// Model is the TUI.
type Model struct {
	ctx context.Context
	c   Client
	km  *keys.Map
	log *slog.Logger
	// th is shared by every component; a change of background replaces
	// what it points to, so they all draw with the new palette.
	th *theme.Theme

	sessionAtStart string
	stopOnQuit     bool

	w, h int
	tab  tab

	chats     *chats.Chats
	agents    *agentsview.Agents
	schedules *schedulesview.Schedules
	webhooks  *webhooksview.Webhooks
	history   *history.History
	help      *help.Help

	// screens are the open conversations, the one in front last; Back
	// returns to the one before.
	screens   []screen
	newScreen func(id string) screen
	// newUnborn is the screen of a new session of an agent, stored with
	// its first message.
	newUnborn func(agent string) screen
	// drafts outlive the conversations: a draft is posted when its run
	// stops even if its conversation is closed.
	drafts *conversation.Drafts

	dialog dialog

	conn      client.ConnState
	connKnown bool
	status    msgs.Status

	// started are the sessions this TUI created or started a run in.
	started  map[string]bool
	quitting bool

	redraw time.Duration
}

// New builds the shell; Init starts it.
func New(cfg Config) *Model {
	ctx := cfg.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := cfg.Client
	th := theme.New(true) // until the terminal says what its background is
	m := &Model{
		ctx: ctx, c: c, km: cfg.Keys, log: log, th: th,
		sessionAtStart: cfg.SessionID,
		stopOnQuit:     cfg.StopOnQuit,
		redraw:         cfg.Redraw,
		chats:          chats.New(ctx, c, th, cfg.Keys, now),
		agents:         agentsview.New(ctx, c, th, cfg.Keys),
		schedules:      schedulesview.New(ctx, c, th, cfg.Keys, now),
		webhooks:       webhooksview.New(ctx, c, th, cfg.Keys, now),
		history:        history.New(ctx, c, th, cfg.Keys, now),
		help:           help.New(th, cfg.Keys),
		started:        map[string]bool{},
		drafts:         conversation.NewDrafts(c),
	}
	m.newScreen = func(id string) screen {
		return conversation.New(m.c, m.th, m.km, m.drafts, id)
	}
	m.newUnborn = func(agent string) screen {
		return conversation.NewUnborn(m.c, m.th, m.km, m.drafts, agent)
	}
	return m
}

// Init asks the terminal for its background and fetches every list.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor, m.chats.Refresh(), m.agents.Refresh(), m.schedules.Refresh(), m.webhooks.Refresh(), m.history.Refresh()}
	if m.sessionAtStart != "" {
		cmds = append(cmds, m.open(m.sessionAtStart))
	}
	return tea.Batch(append(cmds, m.tick())...)
}

// redrawTick is the clock's message: the screen is drawn again.
type redrawTick struct{}

// tick waits for the next redraw, when the shell has a clock.
func (m *Model) tick() tea.Cmd {
	if m.redraw <= 0 {
		return nil
	}
	return tea.Tick(m.redraw, func(time.Time) tea.Msg { return redrawTick{} })
}

// Update routes one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case redrawTick:
		return m, tea.Batch(m.poll(), m.tick())
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return m, nil
	case tea.BackgroundColorMsg:
		if msg.IsDark() != m.th.Dark {
			*m.th = *theme.New(msg.IsDark())
			m.history.Restyle()
			m.chats.Restyle()
			m.agents.Restyle()
			for _, s := range m.screens {
				s.Restyle()
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.PasteMsg:
		return m, m.paste(msg)
	case msgs.Conn:
		wasUp := m.connKnown && m.conn.Connected
		m.conn, m.connKnown = msg.State, true
		cmds := []tea.Cmd{m.toScreens(msg)}
		if msg.State.Connected && !wasUp {
			// The lists were fetched before the stream was up (or while it
			// was down): what happened in between is only in a fresh list.
			cmds = append(cmds, m.chats.Refresh(), m.history.Refresh(), m.schedules.Refresh(), m.webhooks.Refresh())
		}
		if !msg.State.Connected && msg.State.Err != nil {
			m.log.Warn("event stream down", "err", msg.State.Err, "retry", msg.State.Retry)
		}
		return m, tea.Batch(cmds...)
	case msgs.Event:
		return m, m.event(msg)
	case msgs.Snapshot:
		// Events may have been missed: whatever shows sessions fetches
		// them again.
		return m, tea.Batch(m.chats.Handle(msg), m.history.Handle(msg), m.schedules.Handle(msg), m.webhooks.Handle(msg), m.toScreens(msg))
	case msgs.OpenSession:
		m.dialog = nil
		if m.status.Err != nil {
			// What failed before (a prefix of no id) is not what shows.
			m.status = msgs.Status{}
		}
		cmd := m.open(msg.ID)
		if msg.Write {
			cmd = tea.Batch(cmd, m.top().Write())
		}
		return m, cmd
	case msgs.Created:
		m.started[msg.ID] = true
		m.status = msgs.Status{}
		if t := m.top(); t != nil && t.SessionID() == msg.ID {
			m.chats.SetOpen(msg.ID)
		}
		return m, nil
	case msgs.Back:
		return m, m.back()
	case msgs.Status:
		m.status = msg
		if msg.Err != nil {
			m.log.Info("status", "err", msg.Err)
		}
		return m, nil
	case msgs.Started:
		m.started[msg.ID] = true
		return m, nil
	case agentsview.NewSession:
		// Nothing is stored until the first message: a new session
		// left without one leaves no trace.
		m.dialog = nil
		s := m.newUnborn(msg.Agent)
		m.screens = append(m.screens, s)
		m.chats.SetOpen("")
		m.status = msgs.Status{Text: "new session with " + msg.Agent + ": stored when you send its first message"}
		return m, s.Init()
	case chats.Loaded, chats.Deleted:
		return m, m.chats.Handle(msg)
	case history.Loaded:
		return m, m.history.Handle(msg)
	case agentsview.Reply:
		return m, m.agents.Handle(msg)
	case schedulesview.Reply:
		return m, m.schedules.Handle(msg)
	case webhooksview.Reply:
		return m, m.webhooks.Handle(msg)
	case conversation.DraftSent:
		return m, m.drafts.Handle(msg)
	case conversation.Reply:
		return m, m.toSession(msg.Session(), msg)
	}
	m.unowned(msg)
	return m, nil
}

// unownedLog is the log line of a message no component takes.
const unownedLog = "message without an owner"

// unowned notes a message no component takes. The TUI's own messages
// each have an owner (the tests fail on one that has none); what is left
// is bubbletea's and the bubbles' own, such as a cursor's blink, which no
// component here asks for.
func (m *Model) unowned(msg tea.Msg) {
	m.log.Debug(unownedLog, "type", typeName(msg))
}

// typeName names msg's type with its package's whole path.
func typeName(msg tea.Msg) string {
	t := reflect.TypeOf(msg)
	if t == nil || t.PkgPath() == "" {
		return fmt.Sprintf("%T", msg)
	}
	return t.PkgPath() + "." + t.Name()
}

// event hands an event to what shows it. A change of the agents is the
// Agents tab's; an event of a session goes to the lists and the drafts,
// which follow every session, and to the screens of that session. A
// session.updated goes to every screen: one of the same tree carries the
// spend of the budget the screen's session shares.
func (m *Model) event(msg msgs.Event) tea.Cmd {
	ev := msg.Event
	body := ev.GetBody()
	if _, ok := body.(*agentsv1.Event_AgentsChanged); ok {
		return m.agents.Handle(msg)
	}
	cmds := []tea.Cmd{m.drafts.Handle(msg), m.chats.Handle(msg), m.history.Handle(msg), m.schedules.Handle(msg)}
	_, tree := body.(*agentsv1.Event_SessionUpdated)
	for _, s := range m.screens {
		if tree || s.SessionID() == ev.GetSessionId() {
			cmds = append(cmds, s.Handle(msg))
		}
	}
	return tea.Batch(cmds...)
}

// toSession hands a reply to the screens of session id: the one that
// asked, or one opened since on the same session, which takes it as its
// own. A reply whose screen closed finds none and is dropped.
func (m *Model) toSession(id string, msg conversation.Reply) tea.Cmd {
	var cmds []tea.Cmd
	for _, s := range m.screens {
		if s.SessionID() == id {
			cmds = append(cmds, s.Handle(msg))
		}
	}
	return tea.Batch(cmds...)
}

// toScreens hands msg to every open conversation.
func (m *Model) toScreens(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.screens))
	for _, s := range m.screens {
		cmds = append(cmds, s.Handle(msg))
	}
	return tea.Batch(cmds...)
}

func (m *Model) top() screen {
	if len(m.screens) == 0 {
		return nil
	}
	return m.screens[len(m.screens)-1]
}

// open shows a session's conversation in front, unless it is already.
func (m *Model) open(id string) tea.Cmd {
	if t := m.top(); t != nil && t.SessionID() == id {
		return nil
	}
	s := m.newScreen(id)
	m.screens = append(m.screens, s)
	m.chats.SetOpen(id)
	return s.Init()
}

// back closes the screen in front.
func (m *Model) back() tea.Cmd {
	t := m.top()
	if t == nil {
		return nil
	}
	m.screens = m.screens[:len(m.screens)-1]
	open := ""
	if n := m.top(); n != nil {
		open = n.SessionID()
	}
	m.chats.SetOpen(open)
	return t.Close()
}

// closeScreens closes every conversation, back to the tabs.
func (m *Model) closeScreens() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.screens) > 0 {
		cmds = append(cmds, m.back())
	}
	return tea.Batch(cmds...)
}

// handleKey gives a key to whatever holds the keyboard: a dialog, else
// the conversation in front, else the tab; what none of them uses is a
// global key.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.km
	if key.Matches(msg, km.Get(keys.Quit)) {
		return m.quit()
	}
	if m.dialog != nil {
		cmd, done := m.dialog.HandleKey(msg)
		if done {
			m.dialog = nil
		}
		return cmd
	}
	t := m.top()
	if t != nil {
		if cmd, used := t.HandleKey(msg); used {
			return cmd
		}
		if t.Focused() && (msg.Text != "" || key.Matches(msg, km.Get(keys.NextTab), km.Get(keys.PrevTab))) {
			return nil
		}
		if key.Matches(msg, km.Get(keys.Back)) {
			return m.back()
		}
	}
	// Tabs switch even while a tab's input line has the keyboard.
	if cmd, ok := m.switchTab(msg); ok {
		return cmd
	}
	if t == nil {
		if cmd, used := m.tabKeys(msg); used {
			return cmd
		}
	}
	switch {
	case key.Matches(msg, km.Get(keys.QuitOutsideText)):
		// Whatever types text has had the key by now and left it.
		return m.quit()
	case key.Matches(msg, km.Get(keys.Help)):
		m.tab = helpTab
		return m.closeScreens()
	case key.Matches(msg, km.Get(keys.NewSession)):
		return m.pickAgent()
	case key.Matches(msg, km.Get(keys.OpenByID)):
		p, cmd := newIDPrompt(m.th, km, m.resolveID)
		m.dialog = p
		return cmd
	case key.Matches(msg, km.Get(keys.Reload)):
		m.status = msgs.Status{Text: "reloading agents…"}
		return m.agents.Reload()
	}
	return nil
}

// typing reports whether a text field (or a prompt that reads letters)
// has the keyboard, where a letter is not a command.
func (m *Model) typing() bool {
	if m.dialog != nil {
		return true
	}
	if t := m.top(); t != nil {
		return t.Focused()
	}
	switch m.tab {
	case chatsTab:
		return m.chats.Focused()
	case historyTab:
		return m.history.Focused()
	case agentsTab:
		return m.agents.Searching()
	case webhooksTab:
		return m.webhooks.Confirming()
	}
	return false
}

// poll reads the webhooks again while their tab is shown: no event
// says a delivery was made.
func (m *Model) poll() tea.Cmd {
	if m.tab != webhooksTab || m.top() != nil {
		return nil
	}
	return m.webhooks.Poll()
}

func (m *Model) switchTab(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, m.km.Get(keys.NextTab)):
		m.tab = (m.tab + 1) % tabCount
	case key.Matches(msg, m.km.Get(keys.PrevTab)):
		m.tab = (m.tab + tabCount - 1) % tabCount
	default:
		return nil, false
	}
	// A conversation is shown over the tabs: choosing a tab leaves it.
	// The Webhooks tab, read only while shown, catches up as it shows.
	return tea.Batch(m.closeScreens(), m.poll()), true
}

func (m *Model) tabKeys(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch m.tab {
	case chatsTab:
		return m.chats.HandleKey(msg)
	case agentsTab:
		return m.agents.HandleKey(msg)
	case schedulesTab:
		return m.schedules.HandleKey(msg)
	case webhooksTab:
		return m.webhooks.HandleKey(msg)
	case historyTab:
		return m.history.HandleKey(msg)
	default:
		return m.help.HandleKey(msg)
	}
}

// paste goes where the keys go: the dialog, else the screen in front,
// else the History search.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.dialog != nil:
		return nil
	case m.top() != nil:
		return m.top().Handle(msg)
	case m.tab == historyTab:
		return m.history.Paste(msg)
	case m.tab == chatsTab:
		return m.chats.Paste(msg)
	case m.tab == agentsTab:
		return m.agents.Paste(msg)
	}
	return nil
}

// pickAgent opens the agent picker of a new session.
func (m *Model) pickAgent() tea.Cmd {
	if m.agents.Loaded() && len(m.agents.List()) == 0 {
		m.status = msgs.Status{Text: "no agents loaded: nothing to start a session with"}
		return nil
	}
	// The picker reads the list as it draws: opened before the agents
	// arrive, it fills in when they do.
	m.dialog = &agentPicker{th: m.th, km: m.km, agents: m.agents.List}
	return nil
}

// quit leaves, first stopping the runs this TUI started when it was told
// to (an embedded TUI: its server goes away with it). A second quit
// while the stops are under way leaves at once.
func (m *Model) quit() tea.Cmd {
	closing := m.closeScreens()
	if m.quitting || !m.stopOnQuit {
		return tea.Sequence(closing, tea.Quit)
	}
	ids := m.stillRunning()
	if len(ids) == 0 {
		return tea.Sequence(closing, tea.Quit)
	}
	m.quitting = true
	m.status = msgs.Status{Text: "stopping the runs this session started…"}
	return tea.Sequence(closing, stopRuns(m.ctx, m.c, m.log, ids), tea.Quit)
}

// stillRunning lists the sessions this TUI started whose run is active,
// as the events last said.
func (m *Model) stillRunning() []string {
	var ids []string
	for id := range m.started {
		if meta := m.chats.Meta(id); meta != nil && meta.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
			ids = append(ids, id)
		}
	}
	return ids
}
