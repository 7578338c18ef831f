package luatool

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// jsonModule: json.encode(value) → text, json.decode(text) → value.
// Both raise an error on a value they cannot convert.
func (r *run) jsonModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			v, err := toGo(L.CheckAny(1), 0)
			if err != nil {
				L.RaiseError("json.encode: %v", err)
			}
			text, err := json.Marshal(v)
			if err != nil {
				L.RaiseError("json.encode: %v", err)
			}
			r.checkSize(L, "json.encode", len(text))
			L.Push(lua.LString(text))
			return 1
		},
		"decode": func(L *lua.LState) int {
			v, err := decodeJSON(L.CheckString(1))
			if err != nil {
				L.RaiseError("json.decode: %v", err)
			}
			L.Push(fromGo(L, v))
			return 1
		},
	})
}

// textModule: plain-text helpers (no Lua patterns), counting in
// characters, not bytes.
func (r *run) textModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"split": func(L *lua.LState) int {
			s, sep := L.CheckString(1), L.OptString(2, " ")
			var parts []string
			if sep == "" {
				parts = strings.Split(s, "")
			} else {
				parts = strings.Split(s, sep)
			}
			t := L.CreateTable(len(parts), 0)
			for i, p := range parts {
				t.RawSetInt(i+1, lua.LString(p))
			}
			L.Push(t)
			return 1
		},
		"trim":  func(L *lua.LState) int { L.Push(lua.LString(strings.TrimSpace(L.CheckString(1)))); return 1 },
		"upper": func(L *lua.LState) int { L.Push(lua.LString(strings.ToUpper(L.CheckString(1)))); return 1 },
		"lower": func(L *lua.LState) int { L.Push(lua.LString(strings.ToLower(L.CheckString(1)))); return 1 },
		"len":   func(L *lua.LState) int { L.Push(lua.LNumber(utf8.RuneCountInString(L.CheckString(1)))); return 1 },
		"startswith": func(L *lua.LState) int {
			L.Push(lua.LBool(strings.HasPrefix(L.CheckString(1), L.CheckString(2))))
			return 1
		},
		"endswith": func(L *lua.LState) int {
			L.Push(lua.LBool(strings.HasSuffix(L.CheckString(1), L.CheckString(2))))
			return 1
		},
		// find(s, needle [, init]) → first, last character of the first
		// occurrence at or after init, or nil.
		"find": func(L *lua.LState) int {
			runes := []rune(L.CheckString(1))
			needle := []rune(L.CheckString(2))
			from := clampIndex(L.OptInt(3, 1), len(runes))
			for i := from - 1; i+len(needle) <= len(runes); i++ {
				if string(runes[i:i+len(needle)]) == string(needle) {
					L.Push(lua.LNumber(i + 1))
					L.Push(lua.LNumber(i + len(needle)))
					return 2
				}
			}
			L.Push(lua.LNil)
			return 1
		},
		// gsub(s, old, new [, n]) → s with the first n (all) occurrences
		// of old replaced, and how many were.
		"gsub": func(L *lua.LState) int {
			s, old, repl := L.CheckString(1), L.CheckString(2), L.CheckString(3)
			n := L.OptInt(4, -1)
			if old == "" {
				L.RaiseError("text.gsub: nothing to replace")
			}
			count := strings.Count(s, old)
			if n >= 0 && n < count {
				count = n
			}
			r.checkSize(L, "text.gsub", len(s)+count*(len(repl)-len(old)))
			L.Push(lua.LString(strings.Replace(s, old, repl, n)))
			L.Push(lua.LNumber(count))
			return 2
		},
		// sub(s, i [, j]) → characters i to j, negative from the end, as
		// string.sub counts bytes.
		"sub": func(L *lua.LState) int {
			runes := []rune(L.CheckString(1))
			i := clampIndex(L.CheckInt(2), len(runes))
			j := L.OptInt(3, -1)
			if j < 0 {
				j = len(runes) + j + 1
			}
			j = min(j, len(runes))
			if i > j {
				L.Push(lua.LString(""))
				return 1
			}
			L.Push(lua.LString(string(runes[i-1 : j])))
			return 1
		},
	})
}

// clampIndex is a 1-based Lua index, negative from the end, within 1…n+1.
func clampIndex(i, n int) int {
	if i < 0 {
		i = n + i + 1
	}
	return max(1, min(i, n+1))
}

// timeModule: time.now() → seconds since the epoch; time.sleep(s) waits,
// ended by the script's limit; time.format(t [, layout]) → text;
// time.diff(a, b) → a - b in seconds.
func (r *run) timeModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"now": func(L *lua.LState) int {
			L.Push(lua.LNumber(float64(time.Now().UnixMicro()) / 1e6))
			return 1
		},
		"sleep": func(L *lua.LState) int {
			d := time.Duration(float64(L.CheckNumber(1)) * float64(time.Second))
			if d <= 0 {
				return 0
			}
			timer := time.NewTimer(d)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-r.ctx.Done():
				L.RaiseError("time.sleep: stopped: %v", context.Cause(r.ctx))
			}
			return 0
		},
		"format": func(L *lua.LState) int {
			secs := float64(L.OptNumber(1, lua.LNumber(float64(time.Now().UnixMicro())/1e6)))
			t := time.UnixMicro(int64(secs * 1e6)).UTC()
			L.Push(lua.LString(strftime(t, L.OptString(2, "%Y-%m-%dT%H:%M:%SZ"))))
			return 1
		},
		"diff": func(L *lua.LState) int {
			L.Push(L.CheckNumber(1) - L.CheckNumber(2))
			return 1
		},
	})
}

// strftime formats t as C's strftime does, for the common directives.
func strftime(t time.Time, layout string) string {
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c != '%' || i+1 == len(layout) {
			b.WriteByte(c)
			continue
		}
		i++
		switch layout[i] {
		case 'Y':
			b.WriteString(t.Format("2006"))
		case 'y':
			b.WriteString(t.Format("06"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'j':
			b.WriteString(t.Format("002"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(layout[i])
		}
	}
	return b.String()
}
