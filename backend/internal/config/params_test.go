package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadParams(t *testing.T) {
	t.Parallel()
	params, err := LoadParams(filepath.Join("testdata", "params.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tenant": "acme", "github_token": "ghp-secret-value"}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("LoadParams = %v, want %v", params, want)
	}
}

func TestLoadParamsRejectsBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, want string
	}{
		{"number", `{"limit": 5}`, `FILE: limit: must be a string, or {"value": "…"}`},
		{"wrapped number", `{"limit": {"value": 5}}`, `FILE: limit: must be a string, or {"value": "…"}`},
		{"list", `["a"]`, `FILE: must be a JSON object {"name": "value", …}`},
		{"syntax", "{\"token\": \"ghp-\x02secret\"}", "FILE:1:16: invalid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "params.json")
			write(t, path, tc.content)
			_, err := LoadParams(path)
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
		})
	}
}

func TestResolvedLoadParams(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if p, err := resolve(t, s.options(Flags{})).LoadParams(); p != nil || err != nil {
		t.Errorf("no --params-file: %v, %v", p, err)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "params.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := resolve(t, s.options(Flags{ParamsFile: abs})).LoadParams()
	if err != nil || p["tenant"] != "acme" {
		t.Errorf("--params-file: %v, %v", p, err)
	}
}
