package events

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// TestEveryBodyHasItsKind checks KindOf against the rule clients rely on:
// a body member's kind is its name with the last underscore a dot.
func TestEveryBodyHasItsKind(t *testing.T) {
	t.Parallel()
	fields := (&agentsv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body").Fields()
	kinds := Kinds()
	if len(kinds) != fields.Len() || len(kinds) == 0 {
		t.Fatalf("Kinds() has %d kinds for %d body members", len(kinds), fields.Len())
	}
	seen := map[string]bool{}
	for i, kind := range kinds {
		name := string(fields.Get(i).Name())
		cut := strings.LastIndexByte(name, '_')
		if want := name[:cut] + "." + name[cut+1:]; kind != want {
			t.Errorf("the body %s has the kind %q, want %q", name, kind, want)
		}
		if seen[kind] {
			t.Errorf("two bodies have the kind %q", kind)
		}
		seen[kind] = true
	}
	if got := KindOf(&agentsv1.Event{}); got != "" {
		t.Errorf("an event without a body has the kind %q", got)
	}
	ev := WithKind(&agentsv1.Event{Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{}}})
	if ev.GetKind() != KindRunStopped {
		t.Errorf("WithKind gave a run.stopped body the kind %q", ev.GetKind())
	}
}

// TestNoKindLiterals fails when code outside the tests builds an event
// naming its kind instead of through WithKind, or writes a kind as a string
// literal instead of naming a constant of kinds.go.
func TestNoKindLiterals(t *testing.T) {
	t.Parallel()
	kinds := map[string]bool{}
	for _, k := range Kinds() {
		kinds[k] = true
	}
	fset := token.NewFileSet()
	built := 0
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join(root, "internal", "events", "kinds.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && kinds[v] {
					t.Errorf("%s: the kind %s as a literal: name a constant of kinds.go", fset.Position(n.Pos()), n.Value)
				}
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Event" {
					break
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "agentsv1" {
					break
				}
				built++
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Kind" {
						t.Errorf("%s: an event that names its kind: build it with events.WithKind, which takes the kind from the body", fset.Position(kv.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A walk of the wrong directory would find nothing wrong.
	if built < 20 {
		t.Fatalf("found %d events built under %s; expected the backend's", built, root)
	}
}
