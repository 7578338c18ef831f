package listing

import (
	"errors"
	"testing"

	"connectrpc.com/connect"
)

type thing struct{ id, state string }

func (t *thing) GetId() string { return t.id }

func ids(l *List[*thing]) (out []string) {
	for _, x := range l.Items {
		out = append(out, x.id)
	}
	return out
}

func TestANewListingKeepsTheSelectionOnItsThing(t *testing.T) {
	var l List[*thing]
	l.Take([]*thing{{id: "a"}, {id: "b"}, {id: "c"}}, nil)
	l.Move(1)
	l.Take([]*thing{{id: "z"}, {id: "a"}, {id: "b"}}, nil)
	if got := l.Selected().id; got != "b" {
		t.Fatalf("selected %s, want b", got)
	}
	l.Remove("b")
	if got := l.Selected().id; got != "a" || len(ids(&l)) != 2 {
		t.Fatalf("after the remove: %v, selected %s", ids(&l), got)
	}
	if l.ByID("b") != nil {
		t.Fatal("b is still found")
	}
}

func TestAFailedListingKeepsTheThingsAndSaysWhetherTheServerKeepsNone(t *testing.T) {
	var l List[*thing]
	l.Take([]*thing{{id: "a"}}, nil)
	l.Take(nil, errors.New("down"))
	if l.Err == nil || l.None || !l.Loaded || len(l.Items) != 1 {
		t.Fatalf("after a failure: %+v", l)
	}
	l.Take(nil, connect.NewError(connect.CodeUnimplemented, errors.New("no")))
	if !l.None {
		t.Fatal("an unimplemented service is not None")
	}
	l.Take([]*thing{{id: "a"}}, nil)
	if l.Err != nil || l.None {
		t.Fatalf("a listing does not clear the failure: %+v", l)
	}
}

func TestASubListDropsTheAnswersOfAnotherThing(t *testing.T) {
	var closed *Sub[string]
	closed.Take("a", []string{"x"}, nil) // after the list was closed: no panic
	s := Open[string]("a")
	s.Take("b", []string{"x"}, nil)
	if s.Loaded {
		t.Fatal("took the answer for b")
	}
	s.Take("a", []string{"x", "y"}, nil)
	s.Move(5)
	if !s.Loaded || s.Cur.Index() != 1 {
		t.Fatalf("loaded %v, cursor %d", s.Loaded, s.Cur.Index())
	}
}
