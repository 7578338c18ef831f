package errs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// declaredCodes parses codes.go: every machine code constant, by value.
func declaredCodes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			name := v.Names[0].Name
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s is not a string literal", name)
				continue
			}
			value, _ := strconv.Unquote(lit.Value)
			if v.Doc == nil || !strings.HasPrefix(v.Doc.Text(), name+":") {
				t.Errorf("%s has no comment saying when it is returned (%q…)", name, name+":")
			}
			if !regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`).MatchString(value) {
				t.Errorf("%s is %q, not snake_case", name, value)
			}
			if other, dup := codes[value]; dup {
				t.Errorf("%s and %s are both %q", other, name, value)
			}
			codes[value] = name
		}
	}
	if len(codes) == 0 {
		t.Fatal("codes.go declares no codes")
	}
	return codes
}

func TestCodesDeclared(t *testing.T) {
	t.Parallel()
	declaredCodes(t)
}

// constructors are the functions of this package that take a machine
// code first.
func constructors(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && fn.Name.IsExported() && len(fn.Type.Params.List) > 0 && fn.Type.Params.List[0].Names[0].Name == "code" {
			names[fn.Name.Name] = true
		}
	}
	if !names["NotFound"] || !names["Invalid"] {
		t.Fatalf("constructors found in errs.go: %v", names)
	}
	return names
}

// TestNoLiteralCodes fails when code outside the tests gives an error a
// machine code written as a string literal, or compares one with a
// literal, instead of naming a constant of codes.go.
func TestNoLiteralCodes(t *testing.T) {
	t.Parallel()
	ctors := constructors(t)
	fset := token.NewFileSet()
	calls := 0
	literal := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		return ok && lit.Kind == token.STRING
	}
	isErrs := func(e ast.Expr, names ...string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Name != "errs" {
			return false
		}
		for _, n := range names {
			if sel.Sel.Name == n {
				return true
			}
		}
		return len(names) == 0 && ctors[sel.Sel.Name]
	}
	codeOf := func(e ast.Expr) bool {
		call, ok := e.(*ast.CallExpr)
		return ok && isErrs(call.Fun, "CodeOf")
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if isErrs(n.Fun) && len(n.Args) > 0 {
					calls++
					if literal(n.Args[0]) {
						t.Errorf("%s: errs.%s with the literal code %s: name a constant of codes.go", fset.Position(n.Pos()), n.Fun.(*ast.SelectorExpr).Sel.Name, n.Args[0].(*ast.BasicLit).Value)
					}
				}
			case *ast.CompositeLit:
				if !isErrs(n.Type, "Error") {
					break
				}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Code" && literal(kv.Value) {
						t.Errorf("%s: errs.Error with the literal code %s", fset.Position(kv.Pos()), kv.Value.(*ast.BasicLit).Value)
					}
				}
			case *ast.BinaryExpr:
				if (codeOf(n.X) && literal(n.Y)) || (codeOf(n.Y) && literal(n.X)) {
					t.Errorf("%s: errs.CodeOf compared with a literal", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !codeOf(n.Tag) {
					break
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if literal(e) {
							t.Errorf("%s: a case of errs.CodeOf with a literal", fset.Position(e.Pos()))
						}
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
	if calls < 100 {
		t.Fatalf("found %d calls of the constructors under %s; expected the backend's", calls, root)
	}
}

// TestDocumentedCodes checks that every machine code the protocol's
// list names is one the server declares.
func TestDocumentedCodes(t *testing.T) {
	t.Parallel()
	codes := declaredCodes(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "Machine codes include")
	end := strings.Index(text[max(start, 0):], "Internal errors are reported")
	if start < 0 || end < 0 {
		t.Fatal("docs/protocol.md has no list of machine codes (\"Machine codes include … Internal errors are reported\")")
	}
	listed := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(text[start:start+end], -1)
	if len(listed) == 0 {
		t.Fatal("the list of machine codes in docs/protocol.md names none")
	}
	for _, m := range listed {
		if codes[m[1]] == "" {
			t.Errorf("docs/protocol.md lists %q, which codes.go does not declare", m[1])
		}
	}
}
