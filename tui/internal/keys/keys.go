// Package keys is the terminal UI's keymap, in one place: every action a
// key can do, its default keys and its help text. A keymap file (JSON,
// action name → list of keys) overrides the defaults; the Help tab is
// generated from the map.
package keys

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
)

// Action names a thing a key does. The names are the keymap file's keys.
type Action string

// Binding is an action's keys and help.
type Binding struct {
	Action Action
	// Group sorts the Help tab: "global", "list", "conversation" (wherever
	// the focus is in a conversation), "transcript" (while the transcript
	// has the focus), "composer", "draft", "pending".
	Group string
	key.Binding
}

// Map is the whole keymap.
type Map struct {
	bindings []*Binding
	byAction map[Action]*Binding
}

// Actions. Global.
const (
	Quit Action = "quit"
	// QuitOutsideText quits where no text field has the keyboard: it
	// is a letter, which a text field types.
	QuitOutsideText Action = "quit_outside_text"
	NextTab         Action = "next_tab"
	PrevTab         Action = "prev_tab"
	Help            Action = "help"
	Reload          Action = "reload_agents"
	NewSession      Action = "new_session"
	OpenByID        Action = "open_session"
	Back            Action = "back"
)

// Lists (Chats, Agents, History, Schedules, Webhooks).
const (
	Up     Action = "up"
	Down   Action = "down"
	Open   Action = "open"
	Search Action = "search"
	Delete Action = "delete"
	// EditAgent edits the selected stored agent (the Agents tab).
	EditAgent Action = "edit_agent"
	// AgentVersions shows / hides the selected stored agent's versions,
	// and OlderVersion and NewerVersion pick the one whose change shows.
	AgentVersions Action = "agent_versions"
	OlderVersion  Action = "older_version"
	NewerVersion  Action = "newer_version"
	// PauseSchedule pauses or resumes the selected schedule (the
	// Schedules tab).
	PauseSchedule Action = "pause_schedule"
	// ToggleWebhook disables or enables the selected webhook (the
	// Webhooks tab).
	ToggleWebhook Action = "toggle_webhook"
)

// Conversation.
const (
	Focus        Action = "focus_composer"
	PageUp       Action = "page_up"
	PageDown     Action = "page_down"
	PrevTurn     Action = "prev_turn"
	NextTurn     Action = "next_turn"
	Expand       Action = "toggle_details"
	OpenChild    Action = "open_child"
	CopyTurn     Action = "copy_turn"
	Interrupt    Action = "interrupt"
	HardCancel   Action = "hard_cancel"
	CancelRun    Action = "cancel_run"
	Pause        Action = "pause_resume"
	Fork         Action = "fork"
	ContinueWith Action = "continue_with"
	Export       Action = "export"
	Compact      Action = "compact"
	Timeline     Action = "timeline"
	Pending      Action = "pending_calls"
	Draft        Action = "draft"
)

// Composer and draft.
const (
	Send        Action = "send"
	Newline     Action = "newline"
	Editor      Action = "editor"
	Attach      Action = "attach"
	SendNow     Action = "send_draft_now"
	ToggleDraft Action = "toggle_draft"
)

// Pending calls.
const (
	Answer      Action = "answer_call"
	Fail        Action = "fail_call"
	Approve     Action = "approve_call"
	Reject      Action = "reject_call"
	AlwaysAllow Action = "always_allow_tool"
)

func b(a Action, group, help string, keys ...string) *Binding {
	return &Binding{Action: a, Group: group, Binding: key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(keys, "/"), help))}
}

// Default is the keymap without a file.
func Default() *Map {
	return newMap([]*Binding{
		b(Quit, "global", "quit", "ctrl+c", "ctrl+q"),
		b(QuitOutsideText, "global", "quit, where no text field has the keyboard", "q"),
		b(NextTab, "global", "next tab", "tab"),
		b(PrevTab, "global", "previous tab", "shift+tab"),
		b(Help, "global", "help", "f1"),
		b(Reload, "global", "reload agents and tools", "f5"),
		b(NewSession, "global", "new session", "ctrl+n"),
		b(OpenByID, "global", "open a session by id", "ctrl+o"),
		b(Back, "global", "back / close", "esc"),

		b(Up, "list", "up", "up", "k"),
		b(Down, "list", "down", "down", "j"),
		b(Open, "list", "open", "enter"),
		b(Search, "list", "search (Chats, Agents, History)", "/"),
		b(Delete, "list", "delete, asking first (Chats, Webhooks)", "ctrl+d"),
		b(EditAgent, "list", "edit the stored agent in $EDITOR (Agents)", "e"),
		b(AgentVersions, "list", "show / hide the stored agent's versions and what each changed (Agents)", "v"),
		b(OlderVersion, "list", "the change of an older version (Agents, versions shown)", "["),
		b(NewerVersion, "list", "the change of a newer version (Agents, versions shown)", "]"),
		b(PauseSchedule, "list", "pause / resume the schedule (Schedules)", "p"),
		b(ToggleWebhook, "list", "disable / enable the webhook (Webhooks)", "p"),

		b(PageUp, "conversation", "scroll up", "pgup"),
		b(PageDown, "conversation", "scroll down", "pgdown"),
		b(Interrupt, "conversation", "interrupt", "ctrl+g"),
		b(CancelRun, "conversation", "cancel the run", "ctrl+x"),
		b(Pause, "conversation", "pause / resume", "ctrl+p"),
		b(Fork, "conversation", "fork at the selected turn", "ctrl+f"),
		b(Pending, "conversation", "pending calls", "ctrl+l"),
		b(Draft, "conversation", "open the draft", "ctrl+r"),

		// The transcript's keys are plain letters, lazygit-style: the
		// composer's text field keeps every ctrl key readline gives it
		// (ctrl+a/e start and end of line, ctrl+k/u/w kill).
		b(Focus, "transcript", "write a message", "i"),
		b(PrevTurn, "transcript", "previous turn", "["),
		b(NextTurn, "transcript", "next turn", "]"),
		b(Expand, "transcript", "show / hide thinking and tool details", "space"),
		b(OpenChild, "transcript", "open the helper's session", "o"),
		b(CopyTurn, "transcript", "copy the turn (OSC 52)", "y"),
		b(ContinueWith, "transcript", "continue with another agent", "c"),
		b(Export, "transcript", "export to markdown (asks where)", "e"),
		b(HardCancel, "transcript", "hard cancel (cancel running tools)", "X"),
		b(Compact, "transcript", "compact: summarise the older turns", "z"),
		b(Timeline, "transcript", "show / hide the timeline of runs", "t"),

		b(Send, "composer", "send (while busy: add to the draft)", "enter"),
		b(Newline, "composer", "new line", "shift+enter", "alt+enter", "ctrl+j"),
		b(Editor, "composer", "edit in $EDITOR", "ctrl+v"),
		b(Attach, "composer", "attach a file", "ctrl+t"),
		b(SendNow, "draft", "send the draft now", "ctrl+s"),
		b(ToggleDraft, "draft", "expand / collapse the draft", "ctrl+r"),

		b(Answer, "pending", "answer the call", "enter"),
		b(Fail, "pending", "fail the call", "ctrl+d"),
		b(Approve, "pending", "approve the call", "a"),
		b(Reject, "pending", "reject the call, with a reason", "r"),
		b(AlwaysAllow, "pending", "approve and always allow the tool", "A"),
	})
}

func newMap(bs []*Binding) *Map {
	m := &Map{bindings: bs, byAction: make(map[Action]*Binding, len(bs))}
	for _, x := range bs {
		m.byAction[x.Action] = x
	}
	return m
}

// Get is the binding of a, for key.Matches.
func (m *Map) Get(a Action) key.Binding {
	if x, ok := m.byAction[a]; ok {
		return x.Binding
	}
	return key.NewBinding(key.WithDisabled())
}

// Hint is a footer entry: the actions' keys, each named by its first key
// ("[/]" for two), and a word for what they do.
func Hint(m *Map, desc string, actions ...Action) key.Binding {
	var ks, names []string
	for _, a := range actions {
		b := m.Get(a)
		ks = append(ks, b.Keys()...)
		if len(b.Keys()) > 0 {
			names = append(names, b.Keys()[0])
		}
	}
	return key.NewBinding(key.WithKeys(ks...), key.WithHelp(strings.Join(names, "/"), desc))
}

// Unprinted are a's keys that a text field does not type: all but the
// single characters (k, j, /). Where typing goes into a filter, only
// those do a's action.
func (m *Map) Unprinted(a Action) []string {
	var out []string
	for _, k := range m.Get(a).Keys() {
		if utf8.RuneCountInString(k) != 1 {
			out = append(out, k)
		}
	}
	return out
}

// Bindings lists every binding, in the order of Default.
func (m *Map) Bindings() []*Binding { return m.bindings }

// Load applies the keymap file at path (a JSON object from action to a
// list of keys) over the defaults. An unknown action is an error, so a
// typo does not silently leave a key unbound.
func Load(path string) (*Map, error) {
	m := Default()
	if path == "" {
		return m, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keymap: %w", err)
	}
	var over map[string][]string
	if err := json.Unmarshal(raw, &over); err != nil {
		return nil, fmt.Errorf("keymap %s: want a JSON object from action to a list of keys: %w", path, err)
	}
	names := make([]string, 0, len(over))
	for name := range over {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		x, ok := m.byAction[Action(name)]
		if !ok {
			return nil, fmt.Errorf("keymap %s: unknown action %q", path, name)
		}
		ks := over[name]
		if len(ks) == 0 {
			return nil, fmt.Errorf("keymap %s: action %q: give at least one key", path, name)
		}
		x.Binding = key.NewBinding(key.WithKeys(ks...), key.WithHelp(strings.Join(ks, "/"), x.Help().Desc))
	}
	if err := m.globalKeysAlone(); err != nil {
		return nil, fmt.Errorf("keymap %s: %w", path, err)
	}
	return m, nil
}

// globalKeysAlone checks that no key of the whole screen (quit, the
// tabs, help, …) is another action's too: the whole screen takes it
// first, so the other action would never run, though the Help tab lists
// it. Other actions may share keys, as the parts that have them never
// have the keyboard at once ([ in Agents and in a transcript).
func (m *Map) globalKeysAlone() error {
	owner := map[string]Action{}
	for _, x := range m.bindings {
		if x.Group != "global" {
			continue
		}
		for _, k := range x.Keys() {
			if other, ok := owner[k]; ok {
				return fmt.Errorf("%q is the key of both %s and %s: give one of them another key", k, other, x.Action)
			}
			owner[k] = x.Action
		}
	}
	for _, x := range m.bindings {
		if x.Group == "global" {
			continue
		}
		for _, k := range x.Keys() {
			if other, ok := owner[k]; ok {
				return fmt.Errorf("%q is the key of both %s and %s: give one of them another key", k, other, x.Action)
			}
		}
	}
	return nil
}
