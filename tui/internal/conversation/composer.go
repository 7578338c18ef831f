package conversation

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
	"github.com/agents-os/agents/tui/sanitize"
)

// composerLines is the most lines the composer grows to; longer text
// scrolls inside it (or goes to $EDITOR).
const composerLines = 6

// maxTextLines is the most lines a composer or draft holds (the text
// area's own limit).
const maxTextLines = 10000

// composer is where a message is written: a multi-line text and the
// files attached to it, shown as chips above it.
type composer struct {
	ta    textarea.Model
	atts  []*agentsv1.Attachment
	width int
}

func newComposer(st theme.ConversationStyles, km *keys.Map) composer {
	ta := newTextArea(st, km)
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = composerLines
	ta.SetHeight(1)
	return composer{ta: ta}
}

// newTextArea is a text area that leaves to the screen the keys the
// keymap gives to the conversation, and inserts a line with the keymap's
// newline keys.
func newTextArea(st theme.ConversationStyles, km *keys.Map) textarea.Model {
	ta := textarea.New()
	ta.SetStyles(st.Area)
	ta.ShowLineNumbers = false
	ta.Prompt = "│ "
	ta.CharLimit = 0
	ta.MaxHeight = 0
	// Without this the text area stops taking input once the text has as
	// many lines as the area shows.
	ta.MaxContentHeight = maxTextLines
	ta.KeyMap.InsertNewline = km.Get(keys.Newline)
	// Pasting arrives as tea.PasteMsg; the key that would read the
	// clipboard instead opens $EDITOR.
	ta.KeyMap.Paste = key.NewBinding(key.WithDisabled())
	return ta
}

// newDraftEditor is the text area of the expanded draft: its panel's
// border stands in for the composer's prompt.
func newDraftEditor(st theme.ConversationStyles, km *keys.Map) textarea.Model {
	ta := newTextArea(st, km)
	ta.Prompt = ""
	// Enter sends from the composer; in the draft's editor it is a
	// line like any editor's.
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys(append(km.Get(keys.Send).Keys(), km.Get(keys.Newline).Keys()...)...))
	ta.Placeholder = "an empty draft: what you write here is sent when the run stops"
	return ta
}

func (c *composer) Focus() tea.Cmd { return c.ta.Focus() }
func (c *composer) Blur()          { c.ta.Blur() }

// Draft is the composer's content as a message.
func (c *composer) Draft() Draft {
	return Draft{Text: strings.TrimSpace(c.ta.Value()), Attachments: c.atts}
}

// Set replaces the content.
func (c *composer) Set(d Draft) {
	c.ta.SetValue(d.Text)
	c.atts = d.Attachments
}

// Reset empties the composer.
func (c *composer) Reset() {
	c.ta.Reset()
	c.atts = nil
}

// Restore puts back a message that could not be sent, ahead of what was
// typed since.
func (c *composer) Restore(d Draft) {
	cur := c.Draft()
	c.Set(d.appended(cur.Text, cur.Attachments))
}

func (c *composer) Attach(a *agentsv1.Attachment) { c.atts = append(c.atts, a) }

// DropLastAttachment removes the newest chip; false when there is none.
func (c *composer) DropLastAttachment() bool {
	if len(c.atts) == 0 {
		return false
	}
	c.atts = c.atts[:len(c.atts)-1]
	return true
}

func (c *composer) Empty() bool { return c.ta.Value() == "" }

func (c *composer) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.ta, cmd = c.ta.Update(msg)
	return cmd
}

// Render draws the chips and the text area: a rule on top, then up to
// composerLines lines.
func (c *composer) Render(width int, st theme.ConversationStyles) string {
	if width != c.width {
		c.width = width
		c.ta.SetWidth(width)
	}
	var lines []string
	if chips := renderChips(c.atts, width, st); chips != "" {
		lines = append(lines, chips)
	}
	lines = append(lines, st.Rule.Render(strings.Repeat("─", width)), c.ta.View())
	return strings.Join(lines, "\n")
}

// renderChips draws attachments on one line, cut to width.
func renderChips(atts []*agentsv1.Attachment, width int, st theme.ConversationStyles) string {
	if len(atts) == 0 {
		return ""
	}
	chips := make([]string, len(atts))
	for i, a := range atts {
		chips[i] = st.Chip.Render("+ " + sanitize.Text(a.GetName()) + " " + units.Bytes(int64(len(a.GetData()))))
	}
	return truncate(strings.Join(chips, " ")+st.Muted.Render("  backspace on an empty message removes the last"), width)
}
