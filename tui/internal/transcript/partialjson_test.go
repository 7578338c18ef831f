package transcript

import "testing"

func TestCloseJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`{"prompt":"\u003e\u003e What tim`, `{"prompt":"\u003e\u003e What tim"}`, true},
		{`{"prompt":"half an escape \u00`, `{"prompt":"half an escape "}`, true},
		{`{"prompt":"a backslash \`, `{"prompt":"a backslash "}`, true},
		{`{"a":1,"b`, `{"a":1}`, true},
		{`{"a":1,"b"`, `{"a":1}`, true},
		{`{"a":1, "b":`, `{"a":1}`, true},
		{`{"a":1, "b": tr`, `{"a":1}`, true},
		{`{"a":[1,2,`, `{"a":[1,2]}`, true},
		{`{"a":[1,{"b":"x`, `{"a":[1,{"b":"x"}]}`, true},
		{`{"a":-`, `{}`, true},
		{`{"a":1.`, `{}`, true},
		{`{"a":{"b":true}`, `{"a":{"b":true}}`, true},
		{`{`, `{}`, true},
		{``, ``, false},
		{`not json`, ``, false},
		{`{"a" 1`, ``, false},
		{`{"a":1}}`, ``, false},
	} {
		got, ok := closeJSON(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("closeJSON(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Arguments still streaming read as text, not as escaped JSON: the
// strings so far, unescaped, then "…".
func TestStreamingArgumentsReadAsText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, short, pretty string }{
		{`{"prompt":"\u003e\u003e What tim`, ">> What tim…", "{\n  \"prompt\": \">> What tim\"\n}\n…"},
		{`{"city":"Paris","days":`, "Paris…", "{\n  \"city\": \"Paris\"\n}\n…"},
		{`{"`, "…", "{}\n…"},
		{`{"prompt":"\u003e\u003e What time is it?"}`, ">> What time is it?", "{\n  \"prompt\": \">> What time is it?\"\n}"},
		{`plain text`, "plain text", "plain text"},
	} {
		if got := shortArgs(c.in); got != c.short {
			t.Errorf("shortArgs(%q) = %q, want %q", c.in, got, c.short)
		}
		if got := prettyJSON(c.in); got != c.pretty {
			t.Errorf("prettyJSON(%q) = %q, want %q", c.in, got, c.pretty)
		}
	}
}
