package server

import "testing"

func TestOpenMemberStartsAMemberAfterTheObjectsOwn(t *testing.T) {
	for _, tc := range []struct{ obj, want string }{
		{`{}`, `{"turns":1}`},
		{`{ }`, `{ "turns":1}`},
		{`{"a":1}`, `{"a":1,"turns":1}`},
		{`{"a":1} `, `{"a":1,"turns":1}`},
		{`{"a":{"b":2}}`, `{"a":{"b":2},"turns":1}`},
	} {
		if got := string(openMember(nil, []byte(tc.obj), "turns")) + "1}"; got != tc.want {
			t.Errorf("openMember(%s) then a value = %s, want %s", tc.obj, got, tc.want)
		}
	}
}
