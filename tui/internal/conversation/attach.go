package conversation

import (
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
	"github.com/agents-os/agents/tui/sanitize"
)

// maxAttachment keeps a mistaken path (a disk image, a log) from being
// read into memory and sent.
const maxAttachment = 20 << 20

// maxCandidates is how many completions the prompt lists.
const maxCandidates = 6

// attachPrompt asks for the path of a file to attach, completing names
// with tab.
type attachPrompt struct {
	in         textinput.Model
	candidates []string
	err        string
}

func newAttachPrompt(st theme.ConversationStyles) *attachPrompt {
	in := textinput.New()
	in.Prompt = "attach: "
	in.Placeholder = "path of a file (tab completes)"
	in.SetStyles(st.Input)
	in.KeyMap.AcceptSuggestion.SetEnabled(false)
	in.Focus()
	return &attachPrompt{in: in}
}

func (p *attachPrompt) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

func (p *attachPrompt) Render(width int, st theme.ConversationStyles) string {
	p.in.SetWidth(max(width-len(p.in.Prompt)-1, 1))
	lines := []string{p.in.View()}
	switch {
	// File names are anyone's, a tool's among them: they are shown
	// cleaned, as the server's text is.
	case p.err != "":
		lines = append(lines, st.Error.Render(truncate(sanitize.Text(p.err), width)))
	case len(p.candidates) > 0:
		lines = append(lines, st.Muted.Render(truncate(sanitize.Text(strings.Join(p.candidates, "  ")), width)))
	}
	return strings.Join(lines, "\n")
}

// completionMsg carries the names that complete prefix, for the attach
// prompt of session id.
type completionMsg struct {
	id      string
	prefix  string
	matches []string
}

// complete lists the files whose path starts with prefix (a leading ~
// is the home directory); directories end with a slash.
func complete(id, prefix string) tea.Cmd {
	return func() tea.Msg {
		dir, base := filepath.Split(expandHome(prefix))
		entries, err := os.ReadDir(dirOrDot(dir))
		if err != nil {
			return completionMsg{id: id, prefix: prefix}
		}
		var matches []string
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
				continue
			}
			if e.IsDir() {
				name += string(filepath.Separator)
			}
			matches = append(matches, name)
		}
		sort.Strings(matches)
		return completionMsg{id: id, prefix: prefix, matches: matches}
	}
}

// apply completes the input with matches: the whole name when there is
// one, the longest common prefix and the list when there are several.
func (p *attachPrompt) apply(m completionMsg) {
	if m.prefix != p.in.Value() {
		return // typed on since: a stale answer
	}
	p.err, p.candidates = "", nil
	if len(m.matches) == 0 {
		p.err = "no file matches"
		return
	}
	dir, _ := filepath.Split(m.prefix)
	p.in.SetValue(dir + commonPrefix(m.matches))
	p.in.CursorEnd()
	if len(m.matches) > 1 {
		p.candidates = m.matches
		if len(p.candidates) > maxCandidates {
			p.candidates = append(p.candidates[:maxCandidates:maxCandidates], fmt.Sprintf("… %d more", len(m.matches)-maxCandidates))
		}
	}
}

func commonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// attachedMsg carries a file read for attaching.
type attachedMsg struct {
	id         string
	attachment *agentsv1.Attachment
	err        error
}

// readAttachment reads the file at path into an attachment.
func readAttachment(id, path string) tea.Cmd {
	return func() tea.Msg {
		path = expandHome(path)
		info, err := os.Stat(path)
		switch {
		case err != nil:
			return attachedMsg{id: id, err: err}
		case info.IsDir():
			return attachedMsg{id: id, err: fmt.Errorf("%s is a directory", path)}
		case info.Size() > maxAttachment:
			return attachedMsg{id: id, err: fmt.Errorf("%s is %s, more than the %s an attachment may be", path, units.Bytes(info.Size()), units.Bytes(maxAttachment))}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return attachedMsg{id: id, err: err}
		}
		name := filepath.Base(path)
		return attachedMsg{id: id, attachment: &agentsv1.Attachment{Name: name, MediaType: mediaType(name, data), Data: data}}
	}
}

// mediaType names a file's type by its extension (images as image/png,
// image/jpeg, …), or by its first bytes when the extension says nothing.
func mediaType(name string, data []byte) string {
	t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	if t == "" {
		t = http.DetectContentType(data)
	}
	t, _, _ = strings.Cut(t, ";")
	return strings.TrimSpace(t)
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~"+string(filepath.Separator)); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

func dirOrDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
