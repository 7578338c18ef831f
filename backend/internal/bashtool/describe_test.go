package bashtool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testdataPath is the absolute path of a fixture, as Describe records it.
func testdataPath(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func mustDescribe(t *testing.T, name string) Tool {
	t.Helper()
	tool, err := Describe(context.Background(), filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("Describe(%s): %v", name, err)
	}
	return tool
}

func TestDescribeReadsEveryField(t *testing.T) {
	tool := mustDescribe(t, "echo-args.sh")

	if tool.Path != testdataPath(t, "echo-args.sh") {
		t.Errorf("Path = %q, want the absolute path of the script", tool.Path)
	}
	if tool.Slug != "echo_args" || tool.Name() != "bash_echo_args" {
		t.Errorf("Slug, Name() = %q, %q", tool.Slug, tool.Name())
	}
	if tool.Description != "Echoes its arguments, stdin & environment as JSON <for tests>." {
		t.Errorf("Description = %q", tool.Description)
	}
	wantArgs := []Arg{
		{Name: "first", Description: "a positional word", Type: "string", BackingType: BackingString, Arity: AritySingle, Mode: ModePositional},
		{Name: "flag", Description: "a --flag value pair", Type: "string", BackingType: BackingString, Arity: ArityOptional, Mode: ModeDashDashSpace},
		{Name: "eq", Description: "an --eq=value word", Type: "string", BackingType: BackingString, Arity: ArityOptional, Mode: ModeDashDashEqual},
		{Name: "count", Description: "an integer", Type: "count", BackingType: BackingInteger, Arity: ArityOptional, Mode: ModeDashDashEqual},
		{Name: "ratio", Description: "a number", Type: "ratio", BackingType: BackingNumber, Arity: ArityOptional, Mode: ModeDashDashSpace},
		{Name: "verbose", Description: "a boolean", Type: "bool", BackingType: BackingBoolean, Arity: ArityOptional, Mode: ModeDashDashEqual},
		{Name: "body", Description: "text on stdin", Type: "text", BackingType: BackingString, Arity: ArityOptional, Mode: ModeStdin},
		{Name: "api-token", Description: "a secret in the environment", Type: "token", BackingType: BackingString, Arity: ArityOptional, Mode: ModeEnv},
		{Name: "last", Description: "another positional word", Type: "string", BackingType: BackingString, Arity: ArityOptional, Mode: ModePositional},
	}
	if !reflect.DeepEqual(tool.Args, wantArgs) {
		t.Errorf("Args =\n%+v\nwant\n%+v", tool.Args, wantArgs)
	}
	if tool.EmptyResult != "" || tool.OutputMediaType != "" {
		t.Errorf("EmptyResult, OutputMediaType = %q, %q, want both empty", tool.EmptyResult, tool.OutputMediaType)
	}
}

func TestDescribeReadsEmptyResultMessage(t *testing.T) {
	tool := mustDescribe(t, "empty-output.sh")
	if tool.EmptyResult != "No results." {
		t.Errorf("EmptyResult = %q, want %q", tool.EmptyResult, "No results.")
	}
}

func TestSchemaListsArgumentsInOrderWithRequiredOnes(t *testing.T) {
	tool := mustDescribe(t, "echo-args.sh")
	schema := tool.Schema()

	want := `{"type":"object","properties":{` +
		`"first":{"type":"string","description":"a positional word"},` +
		`"flag":{"type":"string","description":"a --flag value pair"},` +
		`"eq":{"type":"string","description":"an --eq=value word"},` +
		`"count":{"type":"integer","description":"an integer"},` +
		`"ratio":{"type":"number","description":"a number"},` +
		`"verbose":{"type":"boolean","description":"a boolean"},` +
		`"body":{"type":"string","description":"text on stdin"},` +
		`"api-token":{"type":"string","description":"a secret in the environment"},` +
		`"last":{"type":"string","description":"another positional word"}` +
		`},"required":["first"],"additionalProperties":false}`
	if string(schema) != want {
		t.Errorf("Schema() =\n%s\nwant\n%s", schema, want)
	}
	if !json.Valid(schema) {
		t.Error("Schema() is not valid JSON")
	}
}

func TestSchemaOfToolWithoutArguments(t *testing.T) {
	tool := mustDescribe(t, "fail.sh")
	want := `{"type":"object","properties":{},"additionalProperties":false}`
	if got := string(tool.Schema()); got != want {
		t.Errorf("Schema() = %s, want %s", got, want)
	}
}

func TestDescribeFailures(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   []string // substrings of the error, in order
	}{
		{"describe-exits.sh", []string{": describe: exit status 1: missing dependency: jq"}},
		{"describe-bad-json.sh", []string{": describe: invalid JSON:"}},
		{"describe-invalid.sh", []string{
			`: describe: missing "slug"`,
			`args[0] ("a"): invalid "arity" "many" (allowed: "single", "optional")`,
			`args[1] ("b"): invalid "backing_type" "object"`,
			`args[1] ("b"): invalid "mode" "shell"`,
			`args[2] ("c"): missing "type", "backing_type", "arity", "mode"`,
		}},
		{"dir/not-executable.sh", []string{": describe: not executable"}},
		{"dir/nested", []string{": describe: not a regular file"}},
		{"no-such-script.sh", []string{": describe: stat ", "no such file or directory"}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			_, err := Describe(context.Background(), filepath.Join("testdata", tc.script))
			if err == nil {
				t.Fatal("Describe succeeded, want an error")
			}
			var describeErr *DescribeError
			if !errors.As(err, &describeErr) || describeErr.Script != testdataPath(t, tc.script) {
				t.Errorf("error %v is not a *DescribeError naming the script", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, testdataPath(t, tc.script)+": describe: ") {
				t.Errorf("error %q does not start with the script path", msg)
			}
			rest := msg
			for _, want := range tc.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("error %q lacks %q (in order)", msg, want)
				}
				rest = rest[i+len(want):]
			}
		})
	}
}

func TestDescribeGetsACleanEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-of-the-server")
	t.Setenv("HOME", "/home/agents")
	tool := mustDescribe(t, "describe-env.sh")
	exported := strings.Fields(tool.Description)
	if slices.Contains(exported, "OPENAI_API_KEY") {
		t.Errorf("describe got the server's OPENAI_API_KEY; exported: %v", exported)
	}
	if !slices.Contains(exported, "HOME") {
		t.Errorf("describe did not get HOME; exported: %v", exported)
	}
}

func TestDescribeHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Describe(ctx, filepath.Join("testdata", "echo-args.sh"))
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Describe with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestParseDescriptionRules(t *testing.T) {
	for _, tc := range []struct {
		name, json, wantErr string
	}{
		{"minimal", `{"slug":"a-b_c","description":"","args":[]}`, ""},
		{"unknown fields are accepted", `{"slug":"s","description":"d","args":[{"name":"x","description":"","type":"t","backing_type":"string","arity":"single","mode":"positional","tier":"advanced"}],"future":1}`, ""},
		{"output media type", `{"slug":"s","description":"d","args":[],"output-media-type":"image/png"}`, ""},
		{"do nothing on empty", `{"slug":"s","description":"d","args":[],"empty-result":{"tag":"DoNothing"}}`, ""},
		{"missing args", `{"slug":"s","description":"d"}`, `missing "args"`},
		{"missing description", `{"slug":"s","args":[]}`, `missing "description"`},
		{"slug with a space", `{"slug":"my tool","description":"d","args":[]}`, `"slug" "my tool" must be non-empty`},
		{"empty slug", `{"slug":"","description":"d","args":[]}`, `"slug" "" must be non-empty`},
		{"slug too long", `{"slug":"` + strings.Repeat("x", 60) + `","description":"d","args":[]}`, "is too long"},
		{"trailing data", `{"slug":"s","description":"d","args":[]} {}`, "unexpected data after"},
		{"not an object", `["slug"]`, "invalid JSON"},
		{"bad empty-result tag", `{"slug":"s","description":"d","args":[],"empty-result":{"tag":"Shout"}}`, `invalid "empty-result" tag "Shout"`},
		{"empty-result without contents", `{"slug":"s","description":"d","args":[],"empty-result":{"tag":"AddMessage"}}`, `needs a string "contents"`},
		{"duplicate argument", `{"slug":"s","description":"d","args":[` + argJSON("x", "positional") + `,` + argJSON("x", "stdin") + `]}`, "duplicate argument name"},
		{"argument name with =", `{"slug":"s","description":"d","args":[` + argJSON("a=b", "positional") + `]}`, `"name" must be`},
		{"env mode on a reserved variable", `{"slug":"s","description":"d","args":[` + argJSON("agent_slug", "env") + `]}`, "reserved variable AGENT_SLUG"},
		{"nested past the limit", `{"slug":"s","description":"d","args":[],"future":` + strings.Repeat("[", 101) + strings.Repeat("]", 101) + `}`, "invalid JSON: JSON nests lists and objects more than 100 levels deep (at byte 148)"},
		{"two env args on one variable", `{"slug":"s","description":"d","args":[` + argJSON("api-key", "env") + `,` + argJSON("api_key", "env") + `]}`, `variable API_KEY is also used by argument "api-key"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseDescription([]byte(tc.json))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("parseDescription: %v", err)
				}
				if d.Slug == "" {
					t.Error("parsed description has no slug")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func argJSON(name, mode string) string {
	return `{"name":"` + name + `","description":"","type":"string","backing_type":"string","arity":"optional","mode":"` + mode + `"}`
}

func TestEnvVarName(t *testing.T) {
	for name, want := range map[string]string{
		"token":      "TOKEN",
		"api-token":  "API_TOKEN",
		"db.url":     "DB_URL",
		"Already_OK": "ALREADY_OK",
	} {
		if got := (Arg{Name: name}).EnvVarName(); got != want {
			t.Errorf("EnvVarName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestTestdataExecutableBits(t *testing.T) {
	// The fixtures depend on their modes; a checkout that lost them would
	// make other tests fail for a confusing reason.
	for name, wantExecutable := range map[string]bool{
		"echo-args.sh":          true,
		"hang.sh":               true,
		"describe-env.sh":       true,
		"progress.sh":           true,
		"sleep-ok.sh":           true,
		"dir/one.sh":            true,
		"dir/two":               true,
		"dir/nested/three.sh":   true,
		"dir/not-executable.sh": false,
		"dir/agent.json":        false,
	} {
		info, err := os.Stat(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := isExecutable(info); got != wantExecutable {
			t.Errorf("testdata/%s executable = %v, want %v", name, got, wantExecutable)
		}
	}
}
