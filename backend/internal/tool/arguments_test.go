package tool

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// testSpec declares a closed object with a required string, typed
// optional values and a nested object of its own.
var testSpec = Spec{Name: "probe", Parameters: json.RawMessage(`{"type": "object",
	"properties": {
		"prompt": {"type": "string"},
		"session_id": {"type": "string"},
		"count": {"type": "integer"},
		"ratio": {"type": "number"},
		"wait": {"type": "boolean"},
		"tags": {"type": "array", "items": {"type": "string"}},
		"options": {"type": "object", "properties": {"force": {"type": "boolean"}}, "required": ["force"], "additionalProperties": false},
		"extra": {}
	},
	"required": ["prompt"], "additionalProperties": false}`)}

// cached decodes with one Schemas for every test: the schema is compiled
// by the first of them and reused by the rest.
var cached Schemas

// decodeBoth decodes text with DecodeArgs and with the kept schema, and
// fails unless the two agree.
func decodeBoth(t *testing.T, text string) (Args, error) {
	t.Helper()
	args, err := DecodeArgs(testSpec, text)
	again, againErr := cached.Decode(testSpec, text)
	if fmt.Sprint(err) != fmt.Sprint(againErr) || string(args.JSON()) != string(again.JSON()) {
		t.Errorf("Schemas.Decode(%s) = %s, %v; DecodeArgs = %s, %v", text, again.JSON(), againErr, args.JSON(), err)
	}
	return args, err
}

func TestDecodeArgsRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string
	}{
		{"not JSON", `{"prompt": `, []string{"invalid arguments for probe: the arguments are not valid JSON"}},
		{"bad token", `{"prompt": nope}`, []string{"not valid JSON: invalid character"}},
		{"not an object", `["a"]`, []string{"the arguments must be a JSON object, got array"}},
		{"a string", `"prompt"`, []string{"must be a JSON object, got string"}},
		{"two values", `{"prompt": "a"} {"prompt": "b"}`, []string{"one JSON object, with nothing after it"}},
		{"duplicate", `{"prompt": "a", "prompt": "b"}`, []string{`duplicate key "prompt"`}},
		{"case variant", `{"Prompt": "delete"}`, []string{`unknown argument "Prompt": names are case-sensitive; did you mean "prompt"?`, `missing required argument "prompt"`, "accepted arguments: prompt, session_id, count"}},
		{"case variant beside the key", `{"prompt": "hello", "PROMPT": "delete"}`, []string{`keys "PROMPT" and "prompt" differ only in case`, `unknown argument "PROMPT"`}},
		{"Unicode fold", `{"prompt": "x", "ſession_id": "a"}`, []string{`unknown argument "ſession_id": names are case-sensitive; did you mean "session_id"?`}},
		{"Kelvin sign", `{"prompt": "x", "options": {"force": true}, "\u212aey": 1, "KEY": 2}`, []string{"keys \"KEY\" and \"\u212aey\" differ only in case"}},
		{"undeclared", `{"prompt": "x", "agent_slug": "a"}`, []string{`unknown argument "agent_slug"`}},
		{"missing", `{}`, []string{`missing required argument "prompt"`}},
		{"empty is missing too", ``, []string{`missing required argument "prompt"`}},
		{"required null", `{"prompt": null}`, []string{`argument "prompt" must be a string, got null`}},
		{"string for an integer", `{"prompt": "x", "count": "3"}`, []string{`argument "count" must be an integer, got string`}},
		{"fraction for an integer", `{"prompt": "x", "count": 2.5}`, []string{`argument "count" must be an integer, got number`}},
		{"number for a string", `{"prompt": 7}`, []string{`argument "prompt" must be a string, got number`}},
		{"string for a boolean", `{"prompt": "x", "wait": "yes"}`, []string{`argument "wait" must be a boolean, got string`}},
		{"element type", `{"prompt": "x", "tags": ["a", 2]}`, []string{`element "tags[1]" must be a string, got number`}},
		{"nested duplicate", `{"prompt": "x", "extra": {"a": 1, "a": 2}}`, []string{`duplicate key "extra.a"`}},
		{"nested fold", `{"prompt": "x", "extra": [{"mode": 1, "MODE": 2}]}`, []string{`keys "extra[0].MODE" and "mode" differ only in case`}},
		{"nested variant", `{"prompt": "x", "options": {"Force": true}}`, []string{`unknown field "options.Force": names are case-sensitive; did you mean "force"?`, `missing required field "options.force"`}},
		{"nested undeclared", `{"prompt": "x", "options": {"force": true, "all": true}}`, []string{`unknown field "options.all"`}},
		{"too deep", `{"prompt": "x", "extra": ` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, []string{"the arguments nest deeper than 64 levels"}},
		{"too deep in objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), []string{"the arguments nest deeper than 64 levels"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args, err := decodeBoth(t, tc.text)
			if err == nil {
				t.Fatalf("DecodeArgs(%s) = %s, want it refused", tc.text, args.JSON())
			}
			if !strings.HasPrefix(err.Error(), "invalid arguments for probe: ") {
				t.Errorf("error = %q, want it to name the tool", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %q, want it to say %q", err, want)
				}
			}
		})
	}
}

func TestDecodeArgsAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, want string
	}{
		{"canonical spelling", `{ "prompt" : "del\u0065te \"all\"\n", "count": 3.0, "ratio": 1e2, "wait": false }`, `{"prompt":"delete \"all\"\n","count":3.0,"ratio":1e2,"wait":false}`},
		{"nested escapes resolved", `{"prompt": "x", "extra": {"cmd": "r\u006d -rf", "<": [null, true]}}`, `{"prompt":"x","extra":{"cmd":"rm -rf","<":[null,true]}}`},
		{"null for an optional", `{"prompt": "x", "count": null, "tags": null}`, `{"prompt":"x","count":null,"tags":null}`},
		{"control characters", `{"prompt": "a\u0001\tb"}`, `{"prompt":"a\u0001\tb"}`},
		{"deep but within the limit", `{"prompt": "x", "extra": ` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, `{"prompt":"x","extra":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args, err := decodeBoth(t, tc.text)
			if err != nil {
				t.Fatalf("DecodeArgs(%s): %v", tc.text, err)
			}
			if got := string(args.JSON()); got != tc.want {
				t.Errorf("JSON = %s, want %s", got, tc.want)
			}
			if !json.Valid(args.JSON()) {
				t.Errorf("JSON %s is not valid", args.JSON())
			}
		})
	}
	args, err := DecodeArgs(testSpec, `{"prompt": "del\u0065te", "count": 3e1, "wait": true, "options": {"force": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	if args.String("prompt") != "delete" || args.Int("count") != 30 || !args.Bool("wait") || args.String("count") != "" {
		t.Errorf("accessors: %q %d %v", args.String("prompt"), args.Int("count"), args.Bool("wait"))
	}
	if v, _ := args.Value("options"); string(v) != `{"force":true}` {
		t.Errorf("options = %s", v)
	}
	if names := strings.Join(args.Names(), ","); names != "prompt,count,wait,options" {
		t.Errorf("names = %s, want the model's order", names)
	}
}

// A schema that declares nothing, or is not one, checks the structure
// only: one object, no key twice in any case, a bounded depth.
func TestDecodeArgsWithAnOpenSchema(t *testing.T) {
	t.Parallel()
	for _, params := range []string{``, `{}`, `{"type": "object"}`, `not a schema`, `{"type": "object", "properties": {"prompt": {"type": "string"}}}`} {
		spec := Spec{Name: "open", Parameters: json.RawMessage(params)}
		if _, err := DecodeArgs(spec, `{"anything": [1, {"x": "y"}], "prompt": "p"}`); err != nil {
			t.Errorf("schema %s: %v", params, err)
		}
		if _, err := DecodeArgs(spec, `{"a": 1, "A": 2}`); err == nil || !strings.Contains(err.Error(), "differ only in case") {
			t.Errorf("schema %s: folded duplicate = %v, want refused", params, err)
		}
	}
	spec := Spec{Name: "open", Parameters: json.RawMessage(`{"type": "object", "properties": {"prompt": {"type": "string"}}}`)}
	if _, err := DecodeArgs(spec, `{"Prompt": "delete"}`); err == nil || !strings.Contains(err.Error(), `did you mean "prompt"`) {
		t.Errorf("open schema, case variant = %v, want refused", err)
	}
}

// Nesting is refused as soon as it passes the limit, without reading
// the rest: a megabyte of brackets costs what its first levels cost. (Not
// parallel: it counts the bytes the process allocates.)
func TestDecodeArgsRefusesDeepNestingWithoutReadingIt(t *testing.T) {
	deep := `{"prompt": "x", "extra": ` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeArgs(testSpec, deep)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "deeper than 64") {
		t.Fatalf("err = %v, want the depth refused", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("refusing 2 MiB of brackets allocated %d bytes, want it to stop at the limit", n)
	}
	wide := `{"prompt": "x", "extra": [` + strings.Repeat(`[[{"a": 1}]],`, 100000) + `0]}`
	if _, err := DecodeArgs(testSpec, wide); err != nil {
		t.Errorf("a wide, shallow value: %v", err)
	}
}

func BenchmarkDecodeArgs(b *testing.B) {
	text := `{"prompt": "` + strings.Repeat("summarise the file, ", 50) + `", "count": 3, "tags": ["a", "b", "c"], "options": {"force": true}}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeArgs(testSpec, text); err != nil {
			b.Fatal(err)
		}
	}
}

// With the schema kept, a call pays for its arguments only.
func BenchmarkSchemasDecode(b *testing.B) {
	text := `{"prompt": "` + strings.Repeat("summarise the file, ", 50) + `", "count": 3, "tags": ["a", "b", "c"], "options": {"force": true}}`
	var c Schemas
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(testSpec, text); err != nil {
			b.Fatal(err)
		}
	}
}
