package luatool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/agents-os/agents/backend/internal/devtools"
)

// fsModule: files, each path judged by the toolbox's file sandbox. A
// path the sandbox refuses raises an error ("sandbox: access denied: …");
// a file that is missing or cannot be read returns nil and why, so a
// script can test for it.
//
//	fs.read(path) → text          fs.write(path, text) → true
//	fs.list(dir) → {names}        fs.exists(path), fs.isdir(path), fs.isfile(path) → bool
//	fs.mkdir(dir) → true          fs.patch(path, unified diff) → true
func (r *run) fsModule(L *lua.LState) *lua.LTable {
	sb := r.toolbox.sandbox
	return newModule(L, map[string]lua.LGFunction{
		"read": func(L *lua.LState) int {
			real, err := sb.Read(L.CheckString(1))
			if err != nil {
				return r.fsFailed(L, err)
			}
			info, err := os.Stat(real)
			if err != nil {
				return r.fsFailed(L, err)
			}
			r.checkSize(L, "fs.read", int(info.Size()))
			data, err := os.ReadFile(real)
			if err != nil {
				return r.fsFailed(L, err)
			}
			L.Push(lua.LString(data))
			return 1
		},
		"write": func(L *lua.LState) int {
			path, text := L.CheckString(1), L.CheckString(2)
			real, err := sb.Write(path)
			if err == nil {
				err = sb.CheckSize(path, int64(len(text)))
			}
			if err == nil {
				err = os.WriteFile(real, []byte(text), 0o644)
			}
			if err != nil {
				return r.fsFailed(L, err)
			}
			L.Push(lua.LTrue)
			return 1
		},
		"list": func(L *lua.LState) int {
			real, err := sb.Dir(L.CheckString(1))
			if err != nil {
				return r.fsFailed(L, err)
			}
			entries, err := os.ReadDir(real)
			if err != nil {
				return r.fsFailed(L, err)
			}
			names := make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.Name()
			}
			sort.Strings(names)
			t := L.CreateTable(len(names), 0)
			for i, n := range names {
				t.RawSetInt(i+1, lua.LString(n))
			}
			L.Push(t)
			return 1
		},
		"exists": r.stat(func(fs.FileInfo) bool { return true }),
		"isdir":  r.stat(fs.FileInfo.IsDir),
		"isfile": r.stat(func(i fs.FileInfo) bool { return i.Mode().IsRegular() }),
		"mkdir": func(L *lua.LState) int {
			path := L.CheckString(1)
			real, err := sb.Real(path)
			if err != nil {
				return r.fsFailed(L, err)
			}
			if !sb.Allows(filepath.Dir(real)) || !sb.Allows(real) {
				r.denied(L, path)
			}
			if err := os.Mkdir(real, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return r.fsFailed(L, err)
			}
			L.Push(lua.LTrue)
			return 1
		},
		"patch": func(L *lua.LState) int {
			if err := r.patch(L.CheckString(1), L.CheckString(2)); err != nil {
				return r.fsFailed(L, err)
			}
			L.Push(lua.LTrue)
			return 1
		},
	})
}

// stat answers whether path exists and is what want says; a path the
// sandbox refuses raises an error, as it does for a read.
func (r *run) stat(want func(fs.FileInfo) bool) lua.LGFunction {
	return func(L *lua.LState) int {
		path := L.CheckString(1)
		real, err := r.toolbox.sandbox.Real(path)
		if err != nil {
			L.Push(lua.LFalse)
			return 1
		}
		if !r.toolbox.sandbox.Allows(real) {
			r.denied(L, path)
		}
		info, err := os.Stat(real)
		L.Push(lua.LBool(err == nil && want(info)))
		return 1
	}
}

// patch applies a unified diff of one file (or its hunks alone) to path.
func (r *run) patch(path, patch string) error {
	real, err := r.toolbox.sandbox.Write(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(real)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, _, err := devtools.ApplyPatch(data, patch)
	if err != nil {
		return err
	}
	if err := r.toolbox.sandbox.CheckSize(path, int64(len(out))); err != nil {
		return err
	}
	return os.WriteFile(real, out, 0o644)
}

// fsFailed returns nil and why, or raises the error when the sandbox
// refused: a script must not mistake a refusal for a missing file.
func (r *run) fsFailed(L *lua.LState, err error) int {
	msg := err.Error()
	if strings.HasPrefix(msg, "access denied") || strings.Contains(msg, "file sandbox") {
		L.RaiseError("sandbox: %s", msg)
	}
	L.Push(lua.LNil)
	L.Push(lua.LString(msg))
	return 2
}

func (r *run) denied(L *lua.LState, path string) {
	L.RaiseError("sandbox: access denied: %s is outside the toolbox's file sandbox (allowed: %s)", path, r.toolbox.box.Sandbox.Predicate)
}
