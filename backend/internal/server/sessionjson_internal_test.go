package server

import "testing"

func TestSpliceMemberAddsTheMemberLast(t *testing.T) {
	for _, tc := range []struct{ obj, want string }{
		{`{}`, `{"turns":[1]}`},
		{`{ }`, `{ "turns":[1]}`},
		{`{"a":1}`, `{"a":1,"turns":[1]}`},
		{`{"a":1} `, `{"a":1,"turns":[1]}`},
		{`{"a":{"b":2}}`, `{"a":{"b":2},"turns":[1]}`},
	} {
		if got := string(spliceMember([]byte(tc.obj), "turns", []byte(`[1]`))); got != tc.want {
			t.Errorf("spliceMember(%s) = %s, want %s", tc.obj, got, tc.want)
		}
	}
}
