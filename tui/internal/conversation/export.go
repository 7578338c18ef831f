package conversation

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
)

// exportPath is the path the prompt offers: a file named after the
// session in the working directory, in full so it is plain where it goes.
func exportPath(meta *agentsv1.SessionMeta) string {
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, exportName(meta)+".md")
}

// exportName makes a file name of the session's title (letters, digits
// and dashes), else of the start of its id.
func exportName(meta *agentsv1.SessionMeta) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(meta.GetTitle()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	id := meta.GetId()
	if len(id) > 8 {
		id = id[:8]
	}
	if name == "" {
		return "session-" + id
	}
	return name + "-" + id
}

func (s *Screen) openExport() tea.Cmd {
	if s.unborn() {
		return status("nothing to export: the session starts with its first message", nil)
	}
	s.export = newLinePrompt(s.st, "export to: ", exportPath(s.meta), "", "markdown; an existing file is never replaced")
	return s.setFocus(focusExport)
}

func (s *Screen) exportKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case s.is(msg, keys.Back):
		s.export = nil
		return s.setFocus(focusView)
	case msg.Code == tea.KeyEnter:
		path := strings.TrimSpace(s.export.in.Value())
		if path == "" {
			s.export.err = "give the path of a file to write"
			return nil
		}
		abs, err := filepath.Abs(expandHome(path))
		if err != nil {
			s.export.err = err.Error()
			return nil
		}
		return s.exportTo(abs)
	}
	s.export.err = ""
	return s.export.Update(msg)
}

// exported closes the prompt and says where the file went; a failure
// keeps the prompt open, with the reason, for another path.
func (s *Screen) exported(m exportedMsg) tea.Cmd {
	if m.err != nil {
		why := m.err.Error()
		if errors.Is(m.err, fs.ErrExist) {
			why = m.path + " exists: give another name"
		}
		if s.export != nil {
			s.export.err = why
			return nil
		}
		return status("", fmt.Errorf("export: %s", why))
	}
	if s.export != nil {
		s.export = nil
		if s.focus == focusExport {
			s.setFocus(focusView)
		}
	}
	return status("exported to "+m.path, nil)
}
