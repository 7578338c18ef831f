package bashtool

import "strings"

// Mode says how an argument's value reaches the script.
type Mode string

// The modes a description may declare. The first four are the classic
// agents-exe modes; ModeEnv is the later addition agents-exe uses for values
// that must not show up in argv (and so in ps or traces).
const (
	ModePositional    Mode = "positional"    // the value as one argv word
	ModeDashDashSpace Mode = "dashdashspace" // two words: --name value
	ModeDashDashEqual Mode = "dashdashequal" // one word: --name=value
	ModeStdin         Mode = "stdin"         // the value and a newline, on stdin
	ModeEnv           Mode = "env"           // an environment variable, see EnvVarName
)

func (m Mode) known() bool {
	switch m {
	case ModePositional, ModeDashDashSpace, ModeDashDashEqual, ModeStdin, ModeEnv:
		return true
	}
	return false
}

const allowedModes = `"positional", "dashdashspace", "dashdashequal", "stdin", "env"`

// Arity says whether the model must supply an argument.
type Arity string

// The arities a description may declare (agents-exe knows no others).
const (
	AritySingle   Arity = "single"   // required
	ArityOptional Arity = "optional" // may be omitted; nothing is passed then
)

func (a Arity) known() bool { return a == AritySingle || a == ArityOptional }

const allowedArities = `"single", "optional"`

// BackingType is the JSON type the model must use for a value; it becomes
// the argument's "type" in the tool's JSON schema.
type BackingType string

// The backing types a description may declare: the JSON-schema types whose
// values flatten to a single word for the script.
const (
	BackingString  BackingType = "string"
	BackingNumber  BackingType = "number"
	BackingInteger BackingType = "integer"
	BackingBoolean BackingType = "boolean"
)

func (t BackingType) known() bool {
	switch t {
	case BackingString, BackingNumber, BackingInteger, BackingBoolean:
		return true
	}
	return false
}

const allowedBackingTypes = `"string", "number", "integer", "boolean"`

// Arg is one declared argument of a tool.
type Arg struct {
	Name        string
	Description string
	// Type is the author's free-form name for the value ("filename",
	// "url", ...); it documents intent and is not interpreted.
	Type        string
	BackingType BackingType
	Arity       Arity
	Mode        Mode
}

// Required reports whether the model must supply the argument.
func (a Arg) Required() bool { return a.Arity == AritySingle }

// EnvVarName is the variable an env-mode argument is passed in: the name
// upper-cased, with every character other than a letter, a digit or an
// underscore replaced by an underscore ("api-token" → "API_TOKEN").
func (a Arg) EnvVarName() string {
	var b strings.Builder
	for _, r := range strings.ToUpper(a.Name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// maxToolNameLength is the limit OpenAI-compatible APIs put on function
// names; a longer "bash_<slug>" would be rejected at the first model call,
// far from the script that caused it.
const maxToolNameLength = 64

// toolNamePrefix marks bash tools among an agent's tools.
const toolNamePrefix = "bash_"

// validSlug accepts what OpenAI-compatible APIs accept in a function name.
func validSlug(s string) bool { return s != "" && onlyNameChars(s, "_-") }

// validArgName also allows "." and keeps names short enough for any
// provider's schema validation; "=" or spaces would break --name=value.
func validArgName(s string) bool { return s != "" && len(s) <= 64 && onlyNameChars(s, "_.-") }

func onlyNameChars(s, punctuation string) bool {
	for _, r := range s {
		isAlnum := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !isAlnum && !strings.ContainsRune(punctuation, r) {
			return false
		}
	}
	return true
}
