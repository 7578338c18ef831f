package runner

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/placement"
)

// Every type of the package that is an operation (it has the apply of
// one) is in operationList, by its name and its type: an operation left
// out would work on one server and fail only when two share a database.
func TestEveryOperationIsRegistered(t *testing.T) {
	declared := map[string]bool{} // the types with an operation's apply
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "apply" {
				continue
			}
			params := fd.Type.Params.List
			if last, ok := params[len(params)-1].Type.(*ast.Ident); !ok || last.Name != "target" {
				continue
			}
			if recv, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
				declared[recv.Name] = true
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("found no operation in the package's files")
	}
	registered := map[string]bool{}
	for _, o := range operationList {
		body, err := o.decode("{}")
		if err != nil {
			t.Fatalf("%s: decode an empty body: %v", o.name(), err)
		}
		typ := reflect.TypeOf(body).Name()
		if registered[typ] {
			t.Errorf("%s is registered twice", typ)
		}
		registered[typ] = true
		if !declared[typ] {
			t.Errorf("%s is registered but has no apply(ctx, *Runner, target)", typ)
		}
	}
	for typ := range declared {
		if !registered[typ] {
			t.Errorf("operation %s is not in operationList: another server could not apply it", typ)
		}
	}
}

// Every registered operation crosses servers whole: its body, every
// field set, encoded as forwarding encodes it and decoded by the
// operation the receiving side finds under the command's name, is the
// body it was.
func TestOperationsRoundTripThroughForwarding(t *testing.T) {
	if len(operations) != len(operationList) {
		t.Fatalf("%d operations by name for %d registered: two share a name", len(operations), len(operationList))
	}
	for _, o := range operationList {
		t.Run(o.name(), func(t *testing.T) {
			zero, err := o.decode("{}")
			if err != nil {
				t.Fatal(err)
			}
			sample := reflect.New(reflect.TypeOf(zero)).Elem()
			fill(sample, 0)
			body, err := placement.EncodeBody(sample.Interface())
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			found, ok := operations[o.name()]
			if !ok {
				t.Fatalf("the receiving side finds no operation %q", o.name())
			}
			got, err := found.decode(body)
			if err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if !reflect.DeepEqual(got, sample.Interface()) {
				t.Errorf("the body changed on its way:\nsent %#v\ngot  %#v\n(as %s)", sample.Interface(), got, body)
			}
		})
	}
}

// fill sets every field a body's JSON carries to a value other than its
// zero, so that a field lost on the way shows.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)))
		return
	}
	if v.Type() == reflect.TypeOf(json.RawMessage{}) {
		v.SetBytes([]byte(`"raw"`))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("text-%d", depth))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || slices.Contains(strings.Split(f.Tag.Get("json"), ","), "-") {
				continue // not on the wire
			}
			fill(v.Field(i), depth+1)
		}
	}
}
