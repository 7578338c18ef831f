package luatool

import (
	"context"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/agents-os/agents/backend/internal/tool"
)

// The sizes of a script's state. The call stack bounds recursion (a
// script recursing forever gets "stack overflow", not the server); the
// registry, Lua's value stack, starts small (4 Ki slots, 64 KB: most
// scripts need no more) and may grow to 1 Mi slots (16 MB).
const (
	callStackSize    = 256
	registrySize     = 4 << 10
	registryMaxSize  = 1 << 20
	registryGrowStep = 32 << 10
)

// maxPrinted bounds what print collects for the answer.
const maxPrinted = 16 << 10

// run is one script's run: its state and what its modules need.
type run struct {
	toolbox   *Toolbox
	ctx       context.Context
	call      tool.Call
	maxString int
	printed   strings.Builder
	// calls counts the tools.call of the run, to name each call.
	calls int
}

// do runs script in a fresh state and returns its values.
func (r *run) do(script string) (values []any, err error) {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       callStackSize,
		RegistrySize:        registrySize,
		RegistryMaxSize:     registryMaxSize,
		RegistryGrowStep:    registryGrowStep,
		MinimizeStackMemory: true,
	})
	defer L.Close()
	L.SetContext(r.ctx)
	defer func() {
		// A module's Go code that panics fails the call, not the server.
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	if err := r.open(L); err != nil {
		return nil, err
	}
	fn, err := L.LoadString(script)
	if err != nil {
		return nil, err
	}
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		return nil, err
	}
	values = make([]any, 0, L.GetTop())
	for i := 1; i <= L.GetTop(); i++ {
		v, err := toGo(L.Get(i), 0)
		if err != nil {
			return nil, fmt.Errorf("return value %d: %v", i, err)
		}
		values = append(values, v)
	}
	return values, nil
}

// open gives the state its safe libraries and the toolbox's modules.
// Left out: io, os, debug and package (files, processes, the
// environment, the internals of other functions); dofile, loadfile,
// module and the file-loading require of the base library.
func (r *run) open(L *lua.LState) error {
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.fn), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return err
		}
	}
	for _, name := range []string{"dofile", "loadfile", "module", "require"} {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("print", L.NewFunction(r.print))
	str := L.GetGlobal("string").(*lua.LTable)
	L.SetField(str, "rep", L.NewFunction(r.rep))

	modules := map[string]lua.LValue{
		"json":  r.jsonModule(L),
		"text":  r.textModule(L),
		"time":  r.timeModule(L),
		"fs":    r.fsModule(L),
		"http":  r.httpModule(L),
		"tools": r.toolsModule(L),
	}
	for name, m := range modules {
		L.SetGlobal(name, m)
	}
	for _, name := range []string{"string", "table", "math", "coroutine"} {
		modules[name] = L.GetGlobal(name)
	}
	// require('json') returns the module, as agents-exe's scripts write
	// it; nothing else can be required.
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		m, ok := modules[name]
		if !ok {
			L.RaiseError("module %q not found: only json, text, time, fs, http, tools, string, table, math and coroutine can be required", name)
		}
		L.Push(m)
		return 1
	}))
	return nil
}

// print collects its arguments for the answer's "output", as Lua's print
// would write them, rather than on the server's standard output.
func (r *run) print(L *lua.LState) int {
	parts := make([]string, L.GetTop())
	for i := range parts {
		parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
	}
	line := strings.Join(parts, "\t") + "\n"
	if r.printed.Len()+len(line) <= maxPrinted {
		r.printed.WriteString(line)
	}
	return 0
}

// rep is string.rep with its result bounded.
func (r *run) rep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if len(s) > 0 && n > r.maxString/len(s) {
		L.RaiseError("string.rep: the result would be over %d bytes", r.maxString)
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// checkSize raises a Lua error when a string a module made is over the
// largest size.
func (r *run) checkSize(L *lua.LState, what string, n int) {
	if n > r.maxString {
		L.RaiseError("%s: %d bytes, over the %d bytes a string may hold here", what, n, r.maxString)
	}
}

// newModule is a table of functions.
func newModule(L *lua.LState, fns map[string]lua.LGFunction) *lua.LTable {
	t := L.NewTable()
	for name, fn := range fns {
		L.SetField(t, name, L.NewFunction(fn))
	}
	return t
}
