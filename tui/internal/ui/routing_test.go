package ui

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/agentsview"
	"github.com/agents-os/agents/tui/internal/chats"
	"github.com/agents-os/agents/tui/internal/conversation"
	"github.com/agents-os/agents/tui/internal/history"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// tuiModule is the path every package of the TUI's starts with.
const tuiModule = "github.com/agents-os/agents/tui"

// dropWatch collects the messages of the TUI's own that the shell logs
// as having no owner.
type dropWatch struct {
	mu      *sync.Mutex
	dropped *[]string
}

func (h dropWatch) Enabled(context.Context, slog.Level) bool { return true }
func (h dropWatch) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h dropWatch) WithGroup(string) slog.Handler            { return h }

func (h dropWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message != unownedLog {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "type" && strings.HasPrefix(a.Value.String(), tuiModule+"/") {
			h.mu.Lock()
			*h.dropped = append(*h.dropped, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

// watchDrops is a logger that fails t, at its end, for every message of
// the TUI's own that reached no owner: each has one, and a new message
// the shell does not route shows here, in whichever test sends it.
func watchDrops(t *testing.T) *slog.Logger {
	h := dropWatch{mu: new(sync.Mutex), dropped: new([]string)}
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, d := range *h.dropped {
			t.Errorf("the shell dropped %s: no component owns it", d)
		}
	})
	return slog.New(h)
}

// TestEveryMessageOfTheTUIHasAnOwner reads the TUI's sources for every
// message a command returns or emits, and checks the shell's Update
// names its type, or its package's Reply when it is one: a message
// nothing routes would be dropped.
func TestEveryMessageOfTheTUIHasAnOwner(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	type file struct {
		pkg string
		f   *ast.File
	}
	var files []file
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, file{pkg: f.Name.Name, f: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	routed := map[string]bool{}  // the types Update's cases name
	replies := map[string]bool{} // the types with a reply method
	sent := map[string]string{}  // message type → where it is made
	for _, fl := range files {
		for _, decl := range fl.f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			recv := recvName(fn.Recv.List[0].Type)
			if fn.Name.Name == "reply" {
				replies[fl.pkg+"."+recv] = true
			}
			if fl.pkg == "ui" && recv == "Model" && fn.Name.Name == "Update" {
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CaseClause); ok {
						for _, e := range c.List {
							routed[qualified(fl.pkg, e)] = true
						}
					}
					return true
				})
			}
		}
		ast.Inspect(fl.f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			var results *ast.FieldList
			switch fn := n.(type) {
			case *ast.FuncLit:
				body, results = fn.Body, fn.Type.Results
			case *ast.FuncDecl:
				body, results = fn.Body, fn.Type.Results
			case *ast.CallExpr:
				// emit makes a command of a message; send is how
				// Forward hands the program the subscription's.
				if id, ok := fn.Fun.(*ast.Ident); ok && (id.Name == "emit" || id.Name == "send") && len(fn.Args) == 1 {
					if lit, ok := fn.Args[0].(*ast.CompositeLit); ok {
						sent[qualified(fl.pkg, lit.Type)] = fset.Position(fn.Pos()).String()
					}
				}
				return true
			default:
				return true
			}
			if body == nil || results == nil || len(results.List) != 1 || qualified("", results.List[0].Type) != "tea.Msg" {
				return true
			}
			for _, lit := range returnedLiterals(body) {
				sent[qualified(fl.pkg, lit.Type)] = fset.Position(lit.Pos()).String()
			}
			return true
		})
	}

	if len(sent) < 30 {
		t.Fatalf("found only %d message types: the search no longer sees how messages are made", len(sent))
	}
	for _, want := range []string{"conversation.sessionMsg", "conversation.DraftSent", "agentsview.editSaved", "chats.Loaded", "msgs.Status", "msgs.Event"} {
		if _, ok := sent[want]; !ok {
			t.Errorf("%s not found among the messages made: the search is blind to it", want)
		}
	}
	for typ, where := range sent {
		pkg, _, _ := strings.Cut(typ, ".")
		if !routed[typ] && !(replies[typ] && routed[pkg+".Reply"]) {
			t.Errorf("%s (made at %s) has no owner: Update names neither it nor a Reply it is", typ, where)
		}
	}
}

// returnedLiterals are the composite literals body returns, directly or
// through a variable it assigned one to, leaving out nested functions.
func returnedLiterals(body *ast.BlockStmt) []*ast.CompositeLit {
	assigned := map[string][]*ast.CompositeLit{}
	var returned []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && i < len(s.Rhs) {
					if lit, ok := s.Rhs[i].(*ast.CompositeLit); ok {
						assigned[id.Name] = append(assigned[id.Name], lit)
					}
				}
			}
		case *ast.ReturnStmt:
			returned = append(returned, s.Results...)
		}
		return true
	})
	var out []*ast.CompositeLit
	for _, e := range returned {
		switch e := e.(type) {
		case *ast.CompositeLit:
			out = append(out, e)
		case *ast.Ident:
			out = append(out, assigned[e.Name]...)
		}
	}
	return out
}

// recvName is the name of a receiver's type, pointer or not.
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// qualified names a type as package.Name, pkg being the package of the
// file it is written in.
func qualified(pkg string, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return pkg + "." + e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}

// recScreen stands for a conversation and records what the shell hands
// it.
type recScreen struct {
	id  string
	got []tea.Msg
}

func (s *recScreen) Init() tea.Cmd                             { return nil }
func (s *recScreen) HandleKey(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (s *recScreen) Handle(msg tea.Msg) tea.Cmd                { s.got = append(s.got, msg); return nil }
func (s *recScreen) Render(int, int) string                    { return "" }
func (s *recScreen) SessionID() string                         { return s.id }
func (s *recScreen) Focused() bool                             { return false }
func (s *recScreen) Restyle()                                  {}
func (s *recScreen) Close() tea.Cmd                            { return nil }
func (s *recScreen) Write() tea.Cmd                            { return nil }
func (s *recScreen) Keys() []key.Binding                       { return nil }
func (s *recScreen) reset()                                    { s.got = nil }

// repliesOf runs a real conversation's commands over the fake and
// returns their answers: the replies the shell routes by session.
func repliesOf(t *testing.T, c Client, id string) []tea.Msg {
	t.Helper()
	s := conversation.New(c, theme.New(true), keys.Default(), conversation.NewDrafts(c), id)
	var out []tea.Msg
	var run func(tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		case nil:
		default:
			out = append(out, msg)
		}
	}
	run(s.Init())
	if len(out) == 0 {
		t.Fatal("the conversation's Init made no reply")
	}
	return out
}

func eventOf(id string, body any) msgs.Event {
	ev := &agentsv1.Event{SessionId: id}
	switch b := body.(type) {
	case *agentsv1.TextDelta:
		ev.Body = &agentsv1.Event_TextDelta{TextDelta: b}
	case *agentsv1.SessionUpdated:
		ev.Body = &agentsv1.Event_SessionUpdated{SessionUpdated: b}
	case *agentsv1.AgentsChanged:
		ev.Body = &agentsv1.Event_AgentsChanged{AgentsChanged: b}
	}
	return msgs.Event{Event: ev}
}

// Each message goes to its owner and to no other screen: a session's
// events and replies to the screens of that session, a session.updated
// to every screen (one of its tree shares its budget), what every screen
// shows (snapshots, the connection) to all of them, and the lists' and
// the drafts' answers to no screen at all.
func TestMessagesReachOnlyTheirOwners(t *testing.T) {
	t.Parallel()
	f, c := newFakeClient("test")
	fixtures(f)
	m := newTestModel(t, c, nil, nil)
	screens := map[string]*recScreen{}
	m.newScreen = func(id string) screen {
		s := &recScreen{id: id}
		screens[id] = s
		return s
	}
	a, b := id(1), id(7)
	drive(m, m.open(a))
	drive(m, m.open(b))

	all := []string{a, b}
	cases := []struct {
		name string
		msg  tea.Msg
		to   []string // the screens that must get it
	}{
		{"a session's event", eventOf(a, &agentsv1.TextDelta{Text: "hi"}), []string{a}},
		{"another session's event", eventOf(b, &agentsv1.TextDelta{Text: "hi"}), []string{b}},
		{"a session.updated, for the tree's spend", eventOf(id(8), &agentsv1.SessionUpdated{Meta: session(8, "child", "researcher", agentsv1.SessionStatus_SESSION_STATUS_RUNNING, 1, a)}), all},
		{"a change of the agents", eventOf("", &agentsv1.AgentsChanged{Slugs: []string{"coder"}}), nil},
		{"a snapshot", msgs.Snapshot{Snapshot: &agentsv1.Snapshot{}}, all},
		{"a change of the connection", msgs.Conn{State: client.ConnState{Connected: true}}, all},
		{"the chats list's answer", chats.Loaded{}, nil},
		{"a delete's answer", chats.Deleted{}, nil},
		{"the history's answer", history.Loaded{}, nil},
		{"the agents' answer", agentsview.Loaded{}, nil},
		{"a draft's answer", conversation.DraftSent{}, nil},
	}
	for _, r := range repliesOf(t, c, a) {
		cases = append(cases, struct {
			name string
			msg  tea.Msg
			to   []string
		}{"a reply to a screen of " + a, r, []string{a}})
	}
	for _, tc := range cases {
		for _, s := range screens {
			s.reset()
		}
		m.Update(tc.msg)
		for id, s := range screens {
			want := slices.Contains(tc.to, id)
			if got := len(s.got) > 0; got != want {
				t.Errorf("%s (%T): the screen of %s got it: %v, want %v", tc.name, tc.msg, id, got, want)
			}
		}
	}
}
