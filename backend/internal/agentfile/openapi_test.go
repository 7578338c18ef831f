package agentfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// agents-exe's own test agent decodes its keys capitalised (SpecUrl,
// BaseUrl, Filter): it loads, with a warning only for the lifetime this
// server does not implement.
func TestAnAgentsExeOpenAPIToolboxLoads(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"openapi/openapi-tester.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	if w := errorStrings(set.Warnings); len(w) != 1 || !strings.Contains(w[0], "contents.openApiToolboxes[0].contents.Lifetime: not supported") {
		t.Errorf("warnings = %q", w)
	}
	boxes := set.Get("openapi-tester").APIToolboxes
	if len(boxes) != 1 {
		t.Fatalf("toolboxes = %+v", boxes)
	}
	b := boxes[0]
	if b.Kind != APIOpenAPI || b.SpecURL != "http://localhost:8765/openapi.json" || b.Spec != b.SpecURL || b.SpecIsFile ||
		b.BaseURL != "http://localhost:8765" || b.Field != "contents.openApiToolboxes[0]" ||
		b.Filter == nil || b.Filter.Op != "PathPrefix" || b.Filter.Arg != "/items" {
		t.Errorf("toolbox = %+v", b)
	}
}

// The spellings agents-exe documents (specUrl, token, secrets, the
// OnDisk form) load too, with this server's Param secrets.
func TestDocumentedToolboxFieldsLoad(t *testing.T) {
	t.Parallel()
	loader, dir := testdataLoader(t)
	set := loader.Load([]string{"openapi/documented.json"}, nil)
	if len(set.Errors) != 0 || len(set.Warnings) != 0 {
		t.Fatalf("errors %v, warnings %v", errorStrings(set.Errors), errorStrings(set.Warnings))
	}
	boxes := set.Get("documented").APIToolboxes
	if len(boxes) != 2 {
		t.Fatalf("toolboxes = %+v", boxes)
	}
	o, p := boxes[0], boxes[1]
	if !o.SpecIsFile || o.Spec != filepath.Join(dir, "openapi", "shop.json") || o.Name != "shop" || o.Token != "{{param:SHOP_TOKEN}}" ||
		o.Headers["X-Tenant"] != "{{param:TENANT}}" || o.Filter.Op != "And" || len(o.Filter.Args) != 2 || o.Filter.Args[1].Args[0].Arg != "DELETE" {
		t.Errorf("openapi toolbox = %+v", o)
	}
	want := []APISecret{
		{Field: "contents.openApiToolboxes[0].contents.secrets[0]", Source: SecretAPIKey, Ref: "shop", Decoding: DecodeClear, Header: "X-Api-Key", Template: "{{secret}}"},
		{Field: "contents.openApiToolboxes[0].contents.secrets[1]", Source: SecretParam, Ref: "SHOP_TOKEN", Decoding: DecodeBase64, TrimNewlines: true, Template: "{{secret}}", Query: "sig"},
		{Field: "contents.openApiToolboxes[0].contents.secrets[2]", Source: SecretGiven, Ref: "inline-value", Decoding: DecodeClear, TrimNewlines: true, Header: "X-Given", Template: "v={{secret}}"},
	}
	if !slices.Equal(o.Secrets, want) {
		t.Errorf("secrets =\n%#v\nwant\n%#v", o.Secrets, want)
	}
	if s := fmt.Sprint(o.Secrets); strings.Contains(s, "inline-value") {
		t.Errorf("a printed secret shows its value: %s", s)
	}
	if p.Kind != APIPostgREST || p.SpecURL != "http://localhost:3000/" || p.Name != "mydb" || p.Description != "Main database" ||
		!slices.Equal(p.AllowedMethods, []string{"GET", "POST"}) || p.Field != "contents.postgrestToolboxes[0]" {
		t.Errorf("postgrest toolbox = %+v", p)
	}
}

// A toolbox that could not work as written is refused, naming the field.
func TestBadToolboxesAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, box, field, reason string }{
		{"unknown tag", `{"tag": "OpenAPIToolbox", "contents": {}}`, "contents.openApiToolboxes[0].tag", "unknown toolbox"},
		{"no spec", `{"tag": "OpenAPIServer", "contents": {"BaseUrl": "http://x"}}`, "contents.openApiToolboxes[0].contents.SpecUrl", "required"},
		{"no base", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json"}}`, "contents.openApiToolboxes[0].contents.BaseUrl", "required"},
		{"bad base", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "ftp://x"}}`, "contents.openApiToolboxes[0].contents.BaseUrl", "not an http"},
		{"bad spec scheme", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "ftp://x/s.json", "BaseUrl": "http://x"}}`, "contents.openApiToolboxes[0].contents.SpecUrl", "want an http"},
		{"command secret", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Secrets": [
			{"source": {"tag": "Command", "contents": ["pass", "api"]}, "decoder": {"tag": "Clear", "contents": true}, "serializer": {"tag": "Header", "contents": ["X-Key", null]}}]}}`,
			"contents.openApiToolboxes[0].contents.Secrets[0].source.tag", "command is not supported"},
		{"undeclared param", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Token": "{{param:NOPE}}"}}`,
			"contents.openApiToolboxes[0].contents.Token", "does not declare"},
		{"undeclared param secret", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Secrets": [
			{"source": {"tag": "Param", "contents": "NOPE"}, "serializer": {"tag": "QueryString", "contents": "k"}}]}}`,
			"contents.openApiToolboxes[0].contents.Secrets[0].source.contents", "does not declare"},
		{"bad filter", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Filter": {"tag": "And", "contents": [{"tag": "AlwaysTrue"}]}}}`,
			"contents.openApiToolboxes[0].contents.Filter.contents", "two filters"},
		{"unknown filter", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Filter": {"tag": "HostIs", "contents": "x"}}}`,
			"contents.openApiToolboxes[0].contents.Filter.tag", "unknown filter"},
		{"bad serializer", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Secrets": [
			{"source": {"tag": "Given", "contents": "v"}, "serializer": {"tag": "Header", "contents": []}}]}}`,
			"contents.openApiToolboxes[0].contents.Secrets[0].serializer.contents", "want [header name"},
		{"bad name", `{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "name": "my db"}}`,
			"contents.openApiToolboxes[0].contents.name", "letters, digits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "a.json")
			file := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "http://m/v1", "modelName": "m",
				"openApiToolboxes": [` + c.box + `]}}`
			if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ParseFile(path)
			e, ok := err.(*Error)
			if !ok || e.Field != c.field || !strings.Contains(e.Reason, c.reason) {
				t.Errorf("err = %v, want %s: …%s…", err, c.field, c.reason)
			}
		})
	}
}

// A stored agent reads no file of the server for its toolboxes: not its
// contents (OnDisk) nor a secret.
func TestAStoredAgentsToolboxReadsNoServerFile(t *testing.T) {
	t.Parallel()
	for _, box := range []string{
		`{"tag": "OpenAPIServerOnDisk", "contents": "/etc/box.json"}`,
		`{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://x/s.json", "BaseUrl": "http://x", "Secrets": [
			{"source": {"tag": "FileSystem", "contents": "/etc/shadow"}, "serializer": {"tag": "QueryString", "contents": "k"}}]}}`,
	} {
		def := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "http://m/v1", "modelName": "m",
			"openApiToolboxes": [` + box + `]}}`
		if _, _, err := (Loader{WorkDir: t.TempDir()}).ParseDefinition([]byte(def)); err == nil || !strings.Contains(err.Error(), "stored agent") {
			t.Errorf("a stored agent with %s: %v", box, err)
		}
	}
}
