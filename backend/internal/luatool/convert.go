package luatool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds how deep a value nests when it crosses between Lua and
// JSON: a table that holds itself would otherwise never end.
const maxDepth = 64

// toGo is a Lua value as JSON sees it: a table whose keys are 1…n is an
// array, any other table an object (an empty one too), a whole number an
// integer.
func toGo(v lua.LValue, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nests deeper than %d levels (does a table hold itself?)", maxDepth)
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(v), nil
	case lua.LString:
		return string(v), nil
	case lua.LNumber:
		f := float64(v)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return nil, fmt.Errorf("%v has no JSON form", f)
		case f == math.Trunc(f) && math.Abs(f) < 1<<53:
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return tableToGo(v, depth)
	}
	return nil, fmt.Errorf("a %s has no JSON form", v.Type())
}

func tableToGo(t *lua.LTable, depth int) (any, error) {
	n := t.Len()
	count := 0
	t.ForEach(func(lua.LValue, lua.LValue) { count++ })
	if n > 0 && count == n {
		out := make([]any, n)
		for i := 1; i <= n; i++ {
			v, err := toGo(t.RawGetInt(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i-1] = v
		}
		return out, nil
	}
	out := make(map[string]any, count)
	var err error
	t.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		var key string
		switch k := k.(type) {
		case lua.LString:
			key = string(k)
		case lua.LNumber:
			key = k.String()
		default:
			err = fmt.Errorf("a table key of type %s has no JSON form", k.Type())
			return
		}
		out[key], err = toGo(v, depth+1)
	})
	return out, err
}

// fromGo is a decoded JSON value as a Lua value; null is nil.
func fromGo(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case json.Number:
		f, _ := v.Float64()
		return lua.LNumber(f)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := L.CreateTable(len(v), 0)
		for i, item := range v {
			t.RawSetInt(i+1, fromGo(L, item))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.RawSetString(k, fromGo(L, v[k]))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}

// decodeJSON decodes one JSON value, numbers kept exact until Lua gets
// them, nesting bounded.
func decodeJSON(text string) (any, error) {
	if depthOf(text) > maxDepth {
		return nil, fmt.Errorf("nests deeper than %d levels", maxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

// depthOf is how deep brackets nest in text, strings skipped.
func depthOf(text string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == '[' || c == '{'):
			depth++
			deepest = max(deepest, depth)
		case !inString && (c == ']' || c == '}'):
			depth--
		}
	}
	return deepest
}
