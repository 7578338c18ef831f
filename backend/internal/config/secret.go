package config

import (
	"fmt"
	"io"
	"log/slog"
)

const redacted = "[redacted]"

// Secret holds a value that must never be logged or returned, such as an
// API key. Every way of printing or encoding it (fmt verbs, JSON, text,
// slog) shows "[redacted]"; only Reveal gives the value.
//
// The value is captured in a closure rather than stored in a field: even
// printers that dig into unexported fields by reflection, which bypass the
// methods below, find only a function pointer.
type Secret struct {
	reveal func() string
}

// NewSecret wraps value.
func NewSecret(value string) Secret {
	return Secret{reveal: func() string { return value }}
}

// Reveal returns the value, for the one place that needs it (an
// Authorization header, say).
func (s Secret) Reveal() string {
	if s.reveal == nil {
		return ""
	}
	return s.reveal()
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]", for %#v.
func (s Secret) GoString() string { return redacted }

// Format prints "[redacted]" whatever the verb, so that no fmt verb falls
// back to printing the struct.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalText returns "[redacted]"; encoding/json uses it too.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue returns "[redacted]" for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }
