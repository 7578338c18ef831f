package luatool

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// agentsExeHelperPrefix is how agents-exe names the tool of a helper
// agent inside its Lua toolbox; this server's is tool.HelperPrefix.
const agentsExeHelperPrefix = "io_" + tool.HelperPrefix

// toolsModule: the calling agent's tools the toolbox allows.
//
//	tools.list() → {names}
//	tools.call(name, args) → {status = "ok", result_txt = "…"}
//	                       | {status = "error" | "not-allowed" | "not-found", result_txt = why, error = why}
//
// A call runs as the agent's own call of the tool would, in the calling
// session, within the script's time limit.
func (r *run) toolsModule(L *lua.LState) *lua.LTable {
	allowed := r.toolbox.box.Lua.AllowedTools
	return newModule(L, map[string]lua.LGFunction{
		"list": func(L *lua.LState) int {
			t := L.CreateTable(len(allowed), 0)
			for i, name := range allowed {
				t.RawSetInt(i+1, lua.LString(name))
			}
			L.Push(t)
			return 1
		},
		"call": func(L *lua.LState) int {
			name := L.CheckString(1)
			var args any = map[string]any{}
			if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
				v, err := toGo(L.Get(2), 0)
				if err != nil {
					L.RaiseError("tools.call: the arguments: %v", err)
				}
				if m, ok := v.([]any); ok && len(m) == 0 {
					v = map[string]any{}
				}
				args = v
			}
			L.Push(r.callTool(L, name, args))
			return 1
		},
	})
}

// callTool runs one tools.call and returns its result table.
func (r *run) callTool(L *lua.LState, name string, args any) *lua.LTable {
	fail := func(status, why string) *lua.LTable {
		t := L.NewTable()
		t.RawSetString("status", lua.LString(status))
		t.RawSetString("result_txt", lua.LString(why))
		t.RawSetString("error", lua.LString(why))
		return t
	}
	if !slices.Contains(r.toolbox.box.Lua.AllowedTools, name) {
		if len(r.toolbox.box.Lua.AllowedTools) == 0 {
			return fail("not-allowed", fmt.Sprintf("tool %q is not allowed: the toolbox allows no tool", name))
		}
		return fail("not-allowed", fmt.Sprintf("tool %q is not allowed (allowed: %s)", name, strings.Join(r.toolbox.box.Lua.AllowedTools, ", ")))
	}
	if r.toolbox.resolve == nil {
		return fail("not-found", fmt.Sprintf("tool %q: no tool can be called from here", name))
	}
	target := name
	if rest, ok := strings.CutPrefix(name, agentsExeHelperPrefix); ok {
		target = tool.HelperPrefix + rest
	}
	t, err := r.toolbox.resolve(r.ctx, r.call, target)
	switch {
	case errors.Is(err, ErrNoSuchTool):
		return fail("not-found", fmt.Sprintf("tool %q: %v", name, err))
	case err != nil:
		return fail("not-allowed", fmt.Sprintf("tool %q: %v", name, err))
	}
	if t.Mode() != session.CallAttached {
		return fail("error", fmt.Sprintf("tool %q is answered by a client, which a script cannot wait for", name))
	}
	text, err := json.Marshal(args)
	if err != nil {
		return fail("error", err.Error())
	}
	decoded, err := tool.DecodeArgs(t.Spec(), string(text))
	if err != nil {
		return fail("error", err.Error())
	}
	r.calls++
	progress := r.call.Progress
	if progress == nil {
		progress = func(string) {}
	}
	progress("lua: tools.call " + target)
	res := t.Execute(r.ctx, tool.Call{
		// Its own id, under the script's call: a helper's child session
		// is filed under it.
		ID:       fmt.Sprintf("%s.lua%d", r.call.ID, r.calls),
		Name:     target,
		Args:     decoded,
		Session:  r.call.Session,
		Progress: progress,
		Host:     r.call.Host,
	})
	switch {
	case res.Suspended:
		return fail("error", fmt.Sprintf("tool %q did not finish: %s", name, orElse(res.Text, "the server is stopping")))
	case res.Status != "" && res.Status != session.ResultOK:
		return fail("error", res.Text)
	}
	r.checkSize(L, "tools.call", len(res.Text))
	t2 := L.NewTable()
	t2.RawSetString("status", lua.LString("ok"))
	t2.RawSetString("result_txt", lua.LString(res.Text))
	return t2
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
