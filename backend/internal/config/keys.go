package config

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"unicode"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

// Keys are the API keys agents name by their apiKeyId: those of a keys
// file, then those of the environment. Like Secret, Keys never prints,
// encodes or logs a value; only the ids show.
type Keys struct {
	file      string
	values    map[string]Secret
	lookupEnv func(string) (string, bool)
}

// keysDocument is the keys file format, shared with agents-exe:
//
//	{"keys": [{"id": "openai", "value": "sk-…"}]}
type keysDocument struct {
	Keys []map[string]json.RawMessage `json:"keys"`
}

// LoadKeys reads the keys file at path ("" for none) and looks ids up in
// the environment through lookupEnv (nil: os.LookupEnv). Errors name the
// file, the entry and the field, never a value; JSON syntax errors give
// only the position, since the text around it may be part of a key.
func LoadKeys(path string, lookupEnv func(string) (string, bool)) (Keys, error) {
	k := Keys{file: path, values: map[string]Secret{}, lookupEnv: envLookup(lookupEnv)}
	if path == "" {
		return k, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Keys{}, fmt.Errorf("keys file %s: %w", path, err)
	}
	var doc keysDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return Keys{}, redactedJSONError(path, data, err, `must be {"keys": [{"id": "…", "value": "…"}]}`)
	}
	if doc.Keys == nil {
		return Keys{}, &agentfile.Error{File: path, Field: "keys", Reason: "required field is missing"}
	}
	for i, entry := range doc.Keys {
		id, err := keyField(path, i, entry, "id")
		if err != nil {
			return Keys{}, err
		}
		value, err := keyField(path, i, entry, "value")
		if err != nil {
			return Keys{}, err
		}
		if _, dup := k.values[id]; dup {
			return Keys{}, &agentfile.Error{File: path, Field: fmt.Sprintf("keys[%d].id", i), Reason: fmt.Sprintf("duplicate id %q", id)}
		}
		k.values[id] = NewSecret(value)
	}
	return k, nil
}

func keyField(file string, i int, entry map[string]json.RawMessage, name string) (string, error) {
	field := fmt.Sprintf("keys[%d].%s", i, name)
	raw, ok := entry[name]
	if !ok {
		return "", &agentfile.Error{File: file, Field: field, Reason: "required field is missing"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &agentfile.Error{File: file, Field: field, Reason: "must be a string"}
	}
	if strings.TrimSpace(s) == "" {
		return "", &agentfile.Error{File: file, Field: field, Reason: "must not be empty"}
	}
	return s, nil
}

// Lookup returns the key for an agent's apiKeyId: the keys file entry with
// that id if there is one, else the first environment variable set (and
// not empty) among EnvNames(id).
func (k Keys) Lookup(id string) (Secret, bool) {
	s, _, ok := k.find(id)
	return s, ok
}

// Where says where Lookup finds the key for id ("keys file PATH" or
// "environment variable NAME"), or "" when it finds none; for diagnostics.
func (k Keys) Where(id string) string {
	_, where, _ := k.find(id)
	return where
}

func (k Keys) find(id string) (Secret, string, bool) {
	if id == "" {
		return Secret{}, "", false
	}
	if s, ok := k.values[id]; ok {
		return s, "keys file " + k.file, true
	}
	if k.lookupEnv == nil {
		return Secret{}, "", false
	}
	for _, name := range EnvNames(id) {
		if v, ok := k.lookupEnv(name); ok && v != "" {
			return NewSecret(v), "environment variable " + name, true
		}
	}
	return Secret{}, "", false
}

// EnvNames are the environment variables tried for an apiKeyId, in order:
//
//  1. the id exactly as written ("openai-key", "OPENAI_API_KEY");
//  2. the id in upper snake case: letters upper-cased, every character
//     other than an ASCII letter or digit turned into "_"
//     ("openai-key" → "OPENAI_KEY");
//  3. that plus "_API_KEY", unless it already ends in "_KEY"
//     ("openai" → "OPENAI_API_KEY"), the usual name of provider keys.
//
// Duplicates are dropped, so "OPENAI_API_KEY" is tried once.
func EnvNames(id string) []string {
	snake := upperSnake(id)
	names := []string{id}
	if snake != id {
		names = append(names, snake)
	}
	if !strings.HasSuffix(snake, "_KEY") {
		names = append(names, snake+"_API_KEY")
	}
	return names
}

func upperSnake(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			return unicode.ToUpper(r)
		default:
			return '_'
		}
	}, id)
}

// IDs returns the ids of the keys file, sorted. Environment keys are not
// listed: they are found on demand.
func (k Keys) IDs() []string {
	ids := make([]string, 0, len(k.values))
	for id := range k.values {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// String describes the keys without their values.
func (k Keys) String() string {
	return fmt.Sprintf("config.Keys{file: %q, ids: [%s], values: %s}", k.file, strings.Join(k.IDs(), " "), redacted)
}

// GoString is String, for %#v.
func (k Keys) GoString() string { return k.String() }

// Format prints String whatever the verb.
func (k Keys) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// MarshalJSON encodes the file and ids only.
func (k Keys) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		File string   `json:"file,omitempty"`
		IDs  []string `json:"ids"`
	}{k.file, k.IDs()})
}

// LogValue logs the file and ids only.
func (k Keys) LogValue() slog.Value {
	return slog.GroupValue(slog.String("file", k.file), slog.Any("ids", k.IDs()))
}

// redactedJSONError reports a JSON error in a file holding secrets: the
// position for a syntax error (the parser's message quotes the offending
// character, which may belong to a secret), want for anything else.
func redactedJSONError(file string, data []byte, err error, want string) *agentfile.Error {
	if e := agentfile.JSONError(file, data, err); e.Line > 0 {
		e.Reason = "invalid JSON"
		return e
	}
	return &agentfile.Error{File: file, Reason: want}
}
