package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestEnvNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id   string
		want []string
	}{
		{"openai-key", []string{"openai-key", "OPENAI_KEY"}},
		{"OPENAI_API_KEY", []string{"OPENAI_API_KEY"}},
		{"openai", []string{"openai", "OPENAI", "OPENAI_API_KEY"}},
		{"kimi.k2", []string{"kimi.k2", "KIMI_K2", "KIMI_K2_API_KEY"}},
		{"MISTRAL", []string{"MISTRAL", "MISTRAL_API_KEY"}},
	}
	for _, tc := range cases {
		if got := EnvNames(tc.id); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("EnvNames(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestKeysLookup(t *testing.T) {
	t.Parallel()
	file := filepath.Join("testdata", "keys.json")
	keys, err := LoadKeys(file, envOf(map[string]string{
		"openai":          "sk-env-shadowed",
		"OPENAI_KEY":      "sk-env-snake",
		"MISTRAL_API_KEY": "mistral-env",
		"KIMI":            "", // set but empty: not a key
		"KIMI_API_KEY":    "kimi-env",
	}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id, want, where string
	}{
		{"openai", "sk-file-0123456789", "keys file " + file}, // the file wins over the environment
		{"ollama", "unused-by-ollama", "keys file " + file},
		{"openai-key", "sk-env-snake", "environment variable OPENAI_KEY"},
		{"mistral", "mistral-env", "environment variable MISTRAL_API_KEY"},
		{"kimi", "kimi-env", "environment variable KIMI_API_KEY"},
		{"anthropic", "", ""},
		{"", "", ""},
	}
	for _, tc := range cases {
		secret, ok := keys.Lookup(tc.id)
		if ok != (tc.want != "") || secret.Reveal() != tc.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.id, secret.Reveal(), ok, tc.want)
		}
		if got := keys.Where(tc.id); got != tc.where {
			t.Errorf("Where(%q) = %q, want %q", tc.id, got, tc.where)
		}
	}
	if got := keys.IDs(); !reflect.DeepEqual(got, []string{"ollama", "openai"}) {
		t.Errorf("IDs() = %v", got)
	}
}

func TestKeysWithoutFileUseTheEnvironment(t *testing.T) {
	t.Parallel()
	keys, err := LoadKeys("", envOf(map[string]string{"OPENAI_API_KEY": "sk-env"}))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := keys.Lookup("openai"); !ok || s.Reveal() != "sk-env" {
		t.Errorf("Lookup(openai) = %v, %v", s.Reveal(), ok)
	}
}

func TestLoadKeysRejectsBadFiles(t *testing.T) {
	t.Parallel()
	const secret = "sk-do-not-print"
	cases := []struct {
		name, content, want string
	}{
		{"missing keys", `{"key": []}`, "FILE: keys: required field is missing"},
		{"not a list", `{"keys": {"id": "a"}}`, `FILE: must be {"keys": [{"id": "…", "value": "…"}]}`},
		{"missing id", `{"keys": [{"value": "` + secret + `"}]}`, "FILE: keys[0].id: required field is missing"},
		{"missing value", `{"keys": [{"id": "a"}]}`, "FILE: keys[0].value: required field is missing"},
		{"value not a string", `{"keys": [{"id": "a", "value": 12345}]}`, "FILE: keys[0].value: must be a string"},
		{"empty value", `{"keys": [{"id": "a", "value": " "}]}`, "FILE: keys[0].value: must not be empty"},
		{"duplicate id", `{"keys": [{"id": "a", "value": "x"}, {"id": "a", "value": "` + secret + `"}]}`, `FILE: keys[1].id: duplicate id "a"`},
		// The parser's message would quote the bad character, part of a key.
		{"syntax error in a value", "{\"keys\": [{\"id\": \"a\", \"value\": \"sk-do\x01-not-print\"}]}", "FILE:1:38: invalid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "keys.json")
			write(t, path, tc.content)
			_, err := LoadKeys(path, envOf(nil))
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
			if err != nil && strings.Contains(err.Error(), "do-not-print") {
				t.Errorf("the error shows a key: %v", err)
			}
		})
	}
}

// Whatever way a Secret or Keys is printed, encoded or logged, the value
// does not show.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const value = "sk-file-0123456789"
	keys, err := LoadKeys(filepath.Join("testdata", "keys.json"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	secret, ok := keys.Lookup("openai")
	if !ok || secret.Reveal() != value {
		t.Fatalf("Lookup(openai) = %v, the test needs the real value to look for", ok)
	}
	type holder struct {
		Exported Secret
		hidden   Secret
		Keys     Keys
		KeysPtr  *Keys
	}
	h := holder{Exported: secret, hidden: secret, Keys: keys, KeysPtr: &keys}

	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		for _, v := range []any{secret, &secret, keys, &keys, h, &h} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
	}
	outputs = append(outputs, fmt.Sprint(secret, keys, h), fmt.Sprintln(h), secret.String(), keys.String())
	for _, v := range []any{secret, keys, h} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(data))
	}
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	logger.Info("keys", "secret", secret, "keys", keys, "holder", h)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("keys", "secret", secret, "keys", keys)
	outputs = append(outputs, logged.String())

	for _, out := range outputs {
		if strings.Contains(out, value) || strings.Contains(out, fmt.Sprintf("%x", value)) || strings.Contains(out, fmt.Sprintf("%X", value)) {
			t.Errorf("a value shows in %q", out)
		}
	}
	if !strings.Contains(fmt.Sprint(keys), "openai") || !strings.Contains(fmt.Sprint(secret), "[redacted]") {
		t.Errorf("the redacted forms lost their information: %v / %v", keys, secret)
	}
}
