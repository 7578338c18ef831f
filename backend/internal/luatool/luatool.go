// Package luatool runs an agent's LuaToolbox: one tool,
// lua_<name>_execute, that runs a Lua 5.1 script (gopher-lua, in the
// server's process) in a fresh, sandboxed state and answers what the
// script returns, as agents-exe does: {"values": [...]}, each value
// JSON-encoded.
//
// A script reaches the world only through the modules it is given as
// globals (json, text, time, fs, http, tools), each bounded by the
// toolbox: fs by its file sandbox, http by its allowed hosts, tools by
// its allowed tools, all by its time limit. The base library keeps no
// way to load a file, and os, io and debug are not opened at all.
package luatool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/filesandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// Resolve finds the tool a script calls by name among the calling
// agent's own, or says why it cannot be called from a script:
// ErrNoSuchTool when the agent has none of that name.
type Resolve func(ctx context.Context, call tool.Call, name string) (tool.Tool, error)

// ErrNoSuchTool is Resolve's error for a name the agent has no tool of.
var ErrNoSuchTool = errors.New("the agent has no such tool")

// maxAnswer bounds what a call answers, as a bash tool's output is
// bounded.
const maxAnswer = bashtool.DefaultMaxStdout

// maxNesting bounds how deep scripts call Lua tools (themselves, say):
// each level holds a state and a goroutine of the caller.
const maxNesting = 8

// New returns a LuaToolbox's tool; relative paths are taken from
// workDir, and tools.call finds its tools with resolve (nil: none).
func New(box agentfile.BuiltinToolbox, workDir string, resolve Resolve) tool.Tool {
	return &Toolbox{box: box, sandbox: filesandbox.New(box.Sandbox, workDir), resolve: resolve}
}

// Toolbox is a LuaToolbox's tool.
type Toolbox struct {
	box     agentfile.BuiltinToolbox
	sandbox *filesandbox.Sandbox
	resolve Resolve
}

// Spec implements tool.Tool.
func (t *Toolbox) Spec() tool.Spec {
	limit := int(t.box.Lua.Timeout.Seconds())
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"script": map[string]any{"type": "string", "description": "Lua 5.1 source to run. Its return values are the answer, JSON-encoded. " +
				"The modules json, text, time, fs, http and tools are globals (require('json') returns them too)."},
			"timeout": map[string]any{"type": "number", "description": fmt.Sprintf("Seconds the script may run, at most %d (the default).", limit)},
		},
		"required":             []string{"script"},
		"additionalProperties": false,
	})
	desc := t.box.Description
	if desc == "" {
		desc = "Run a sandboxed Lua script."
	}
	return tool.Spec{
		Name:        agentfile.LuaToolPrefix + t.box.Name + agentfile.LuaToolSuffix,
		Description: desc,
		Parameters:  schema,
		Kind:        session.ToolSystem,
		Source:      agentfile.LuaToolboxKind + " " + t.box.Name,
	}
}

// Mode implements tool.Tool.
func (t *Toolbox) Mode() session.CallMode { return session.CallAttached }

// The ways a script is stopped from outside, as context causes.
var (
	errTimeout = errors.New("timeout")
	errMemory  = errors.New("memory")
)

type nestingKey struct{}

// Execute implements tool.Tool: the script runs in a state of its own,
// closed when it ends; every way it can fail is an error result.
func (t *Toolbox) Execute(ctx context.Context, call tool.Call) tool.Result {
	script := call.Args.String("script")
	if strings.TrimSpace(script) == "" {
		return tool.Failed(`the tool needs {"script": "…"}: Lua source to run`)
	}
	limit := t.box.Lua.Timeout
	if raw, ok := call.Args.Value("timeout"); ok {
		var secs float64
		if err := json.Unmarshal(raw, &secs); err == nil && secs > 0 && !math.IsInf(secs, 0) && time.Duration(secs*float64(time.Second)) < limit {
			limit = time.Duration(secs * float64(time.Second))
		}
	}
	depth, _ := ctx.Value(nestingKey{}).(int)
	if depth >= maxNesting {
		return tool.Failed(fmt.Sprintf("Lua scripts may call Lua tools %d deep at most", maxNesting))
	}
	ctx = context.WithValue(ctx, nestingKey{}, depth+1)
	ctx, stopTimer := context.WithTimeoutCause(ctx, limit, errTimeout)
	defer stopTimer()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	run := &run{toolbox: t, ctx: ctx, call: call, maxString: t.maxString()}
	stopWatch := watchMemory(ctx, cancel, int64(t.box.Lua.MaxMemoryMB)<<20)
	values, err := run.do(script)
	stopWatch()
	if err == nil && ctx.Err() != nil {
		// Stopped, but the script caught it (a coroutine's resume, a
		// pcall) and went on to return: it ran past its limits all
		// the same.
		err = ctx.Err()
	}
	if err != nil {
		return tool.Failed(t.explain(ctx, limit, err))
	}
	answer := map[string]any{"values": values}
	if run.printed.Len() > 0 {
		answer["output"] = run.printed.String()
	}
	text, err := json.Marshal(answer)
	if err != nil {
		return tool.Failed("the script's result cannot be encoded as JSON: " + err.Error())
	}
	return tool.OK(bashtool.Cut(string(text), maxAnswer))
}

// explain says why a script failed, in words the model can act on.
func (t *Toolbox) explain(ctx context.Context, limit time.Duration, err error) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimeout):
		return fmt.Sprintf("timeout: the script ran past its %s limit and was stopped", limit)
	case errors.Is(cause, errMemory):
		return fmt.Sprintf("memory: the script allocated more than the toolbox's %d MB and was stopped", t.box.Lua.MaxMemoryMB)
	case cause != nil:
		return "cancelled: " + cause.Error()
	}
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		switch apiErr.Type {
		case lua.ApiErrorSyntax:
			return "syntax error: " + strings.TrimSpace(apiErr.Object.String())
		case lua.ApiErrorRun, lua.ApiErrorError, lua.ApiErrorPanic:
			return "runtime error: " + apiErr.Object.String()
		}
	}
	return "error: " + err.Error()
}

// maxString bounds each string a module makes (a file read, a response
// body, string.rep): gopher-lua has no allocator hook, so a string of
// gigabytes would be allocated before any check could see it.
func (t *Toolbox) maxString() int {
	n := t.box.Lua.MaxMemoryMB << 20 / 2
	if n <= 0 {
		n = agentfile.DefaultLuaMaxMemoryMB << 20 / 2
	}
	return n
}
