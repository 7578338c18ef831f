package bashtool

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
)

// The variables every run gets. They are reserved: inherited values are
// dropped, and neither extra variables nor env-mode arguments may set them,
// so a script can trust they describe the current call.
const (
	EnvSessionID  = "AGENT_SESSION_ID"
	EnvAgentSlug  = "AGENT_SLUG"
	EnvToolCallID = "AGENT_TOOL_CALL_ID"
)

func isReservedEnvVar(name string) bool {
	switch name {
	case EnvSessionID, EnvAgentSlug, EnvToolCallID:
		return true
	}
	return false
}

// Env is what a run knows about the call that caused it.
type Env struct {
	SessionID  string // AGENT_SESSION_ID
	AgentSlug  string // AGENT_SLUG
	ToolCallID string // AGENT_TOOL_CALL_ID

	// Extra variables supplied by the caller (for example session
	// parameters). They override the variables taken from the server's
	// environment and env-mode arguments, so the model cannot replace a
	// value the caller set.
	Extra map[string]string

	// WorkDir is the directory the script runs in; empty means the
	// directory that contains the script.
	WorkDir string

	// OnProgress, when set, receives each line the script writes to
	// stderr, while it runs: lines end at "\n", "\r\n" or "\r", blank
	// lines are skipped, and a line is cut to MaxProgressLine bytes on a
	// character boundary. Calls come one at a time from the goroutine
	// reading stderr and all happen before Run returns. The script's
	// stderr waits while OnProgress runs, so it should not block; rate
	// limiting is the caller's business. Stderr is captured for the
	// Result as usual.
	OnProgress func(line string)

	// Reaper, when set, records the script's process group while it runs,
	// so that a server started after a crash can kill what is left of it.
	Reaper *Reaper

	// Confine, when set, rewrites the script's command before it starts,
	// so that it runs confined (a sandbox's Wrap); an error fails the
	// call, and the script does not run.
	Confine func(*exec.Cmd) error
}

// environment is an ordered set of variables; later sets replace earlier
// ones in place so the result has each name once.
type environment struct {
	names  []string
	values map[string]string
}

func newEnvironment() *environment {
	return &environment{values: map[string]string{}}
}

func (e *environment) set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *environment) list() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.values[n])
	}
	return out
}

// isBaseEnvVar reports the variables of the server's environment every
// tool gets: where programs are, who and where the user is, the locale, the
// time zone and the directory for temporary files. Nothing else of the
// server's environment — API keys, tokens, proxies — reaches a tool unless
// the agent file passes it on by name.
func isBaseEnvVar(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR":
		return true
	}
	return strings.HasPrefix(name, "LC_") // LC_ALL, LC_CTYPE, ...
}

// buildEnvironment layers, lowest priority first: the base variables of
// the server's environment (server, as os.Environ gives it) and those it
// names in pass, env-mode arguments, the caller's extra variables, and the
// reserved variables of the call. Reserved names are never taken from the
// server, even when pass names them.
func buildEnvironment(server, pass []string, env Env, argVars map[string]string) ([]string, error) {
	result := newEnvironment()
	for _, kv := range server {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || isReservedEnvVar(name) {
			continue
		}
		if isBaseEnvVar(name) || slices.Contains(pass, name) {
			result.set(name, value)
		}
	}
	for _, name := range sortedKeys(argVars) {
		result.set(name, argVars[name])
	}
	for _, name := range sortedKeys(env.Extra) {
		value := env.Extra[name]
		if err := checkEnvVar(name, value); err != nil {
			return nil, err
		}
		if isReservedEnvVar(name) {
			return nil, fmt.Errorf("extra environment variable %s is reserved", name)
		}
		result.set(name, value)
	}
	for _, reserved := range []struct{ name, value string }{
		{EnvSessionID, env.SessionID},
		{EnvAgentSlug, env.AgentSlug},
		{EnvToolCallID, env.ToolCallID},
	} {
		if reserved.value == "" {
			continue
		}
		if err := checkEnvVar(reserved.name, reserved.value); err != nil {
			return nil, err
		}
		result.set(reserved.name, reserved.value)
	}
	return result.list(), nil
}

// checkEnvVar rejects what execve cannot carry or would misparse.
func checkEnvVar(name, value string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("invalid environment variable name %q", name)
	}
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("environment variable %s contains a NUL byte", name)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
