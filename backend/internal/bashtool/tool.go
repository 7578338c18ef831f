package bashtool

import (
	"bytes"
	"encoding/json"
	"time"
)

// Defaults for Limits fields left at zero.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxStdout = 64 << 10
	DefaultMaxStderr = 16 << 10
)

// Limits bound one run of a tool. Zero fields take the defaults above.
type Limits struct {
	Timeout   time.Duration // the whole process group is killed after this
	MaxStdout int           // bytes of stdout kept for the model
	MaxStderr int           // bytes of stderr kept for the model and logs
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxStdout <= 0 {
		l.MaxStdout = DefaultMaxStdout
	}
	if l.MaxStderr <= 0 {
		l.MaxStderr = DefaultMaxStderr
	}
	return l
}

// Tool is a described script, ready to be offered to a model and run.
type Tool struct {
	Path        string // absolute path of the script
	Slug        string
	Description string
	Args        []Arg

	// EmptyResult, when not empty, is what the model sees instead of an
	// empty stdout after a successful run ("empty-result" AddMessage).
	EmptyResult string

	// OutputMediaType is the MIME type the script declares for its stdout
	// ("output-media-type"). It is recorded for callers; Run still returns
	// stdout as text.
	OutputMediaType string

	// PassEnv names variables of the server's environment the script gets
	// too, when they are set (the agent file's "passEnv"). A run starts
	// from a clean environment: only PATH, HOME, USER, LOGNAME, LANG, LC_*,
	// TZ and TMPDIR are taken from the server otherwise.
	PassEnv []string

	Limits Limits
}

// Name is the tool's name as the model sees it.
func (t *Tool) Name() string { return toolNamePrefix + t.Slug }

// Schema is the JSON schema of the tool's parameters, for the "parameters"
// of a function declaration: one property per argument, in declaration
// order, typed by its backing type; arguments of arity "single" are
// required; no other property is allowed.
func (t *Tool) Schema() json.RawMessage {
	type property struct {
		Type        BackingType `json:"type"`
		Description string      `json:"description"`
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, arg := range t.Args {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, arg.Name)
		b.WriteByte(':')
		writeJSON(&b, property{Type: arg.BackingType, Description: arg.Description})
		if arg.Required() {
			required = append(required, arg.Name)
		}
	}
	b.WriteByte('}')
	if len(required) > 0 {
		b.WriteString(`,"required":`)
		writeJSON(&b, required)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// writeJSON encodes values that cannot fail to encode (strings and plain
// structs of them), keeping <, > and & readable for the model.
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("bashtool: encoding a schema value: " + err.Error())
	}
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
