package jsoncheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

func TestDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
		max  int
		// offset is the byte of the bracket that goes too deep; -1 when
		// the input is within the limit.
		offset int
	}{
		{"empty", ``, 2, -1},
		{"scalar", `"x"`, 0, -1},
		{"at the limit", nest(3), 3, -1},
		{"one past the limit", nest(4), 3, 3},
		{"objects and lists alike", `{"a":[{"b":1}]}`, 2, 6},
		{"siblings do not add up", `[[1],[2],[3],{"a":1}]`, 2, -1},
		{"brackets in a string", `["[[[[{{{{"]`, 1, -1},
		{"brackets in a key", `{"[[[[":1}`, 1, -1},
		{"an escaped quote does not end the string", `["\"[[[["]`, 1, -1},
		{"an escaped backslash does", `["\\",[[]]]`, 2, 7},
		{"three backslashes escape the quote", `["\\\"[[[["]`, 1, -1},
		{"a unicode escape", `["\u005b\u005b",[]]`, 2, -1},
		{"non-ASCII text", `["é[[[", ["ü"]]`, 2, -1},
		{"the scan ends where an unclosed string begins", `[[ "[[[[`, 2, -1},
		{"closing more than was opened does not buy depth", `]]]][[[`, 2, 6},
		{"the first of many deep ones", nest(10) + nest(10), 5, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := jsoncheck.Depth([]byte(tc.in), tc.max)
			if tc.offset < 0 {
				if err != nil {
					t.Fatalf("Depth(%q, %d) = %v, want nil", tc.in, tc.max, err)
				}
				return
			}
			var de *jsoncheck.DepthError
			if !errors.As(err, &de) {
				t.Fatalf("Depth(%q, %d) = %v, want a *DepthError", tc.in, tc.max, err)
			}
			if de.Max != tc.max || de.Offset != tc.offset {
				t.Errorf("Depth(%q, %d) = %+v, want Max %d Offset %d", tc.in, tc.max, de, tc.max, tc.offset)
			}
		})
	}
}

// TestDepthMessage: the error says what the limit is and where the
// input passed it, in words a client can act on.
func TestDepthMessage(t *testing.T) {
	t.Parallel()
	err := jsoncheck.Depth([]byte(strings.Repeat("[", jsoncheck.MaxDepth+1)), jsoncheck.MaxDepth)
	if err == nil || !strings.Contains(err.Error(), "more than 100 levels") || !strings.Contains(err.Error(), "byte 100") {
		t.Errorf("error = %v, want it to name the limit of 100 levels and byte 100", err)
	}
}

func BenchmarkDepth(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"text", []byte(`{"agent":"probe","message":{"text":"` + strings.Repeat(`lorem ipsum \"dolor\" sit amet, `, 1<<15) + `"}}`)},
		{"nested", []byte(strings.Repeat(`{"a":[1,2,"x"],"b":`, 50) + "null" + strings.Repeat("}", 50))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := jsoncheck.Depth(bc.data, jsoncheck.MaxDepth); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRepeatedKey(t *testing.T) {
	cases := []struct {
		in   string
		path string
		ok   bool
	}{
		{`{"a": 1, "b": {"c": [1, {"d": 2}]}}`, "", false},
		{`{"a": 1, "a": 2}`, "a", true},
		{`{"tag": "x", "contents": {"slug": "d1", "slug": "d2"}}`, "contents.slug", true},
		{`{"l": [{"x": 1}, {"y": {"z": 1}, "y": 2}]}`, "l[1].y", true},
		{`{"l": ["a", "a"], "m": {"a": "a"}}`, "", false},
		{`[{"k": 1}, {"k": 1, "k": 2}]`, "[1].k", true},
		{`{"a": `, "", false},
	}
	for _, tc := range cases {
		if path, ok := jsoncheck.RepeatedKey([]byte(tc.in)); path != tc.path || ok != tc.ok {
			t.Errorf("RepeatedKey(%s) = %q, %v; want %q, %v", tc.in, path, ok, tc.path, tc.ok)
		}
	}
}
