package server

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"
)

func decodeDoc(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// TestOpenAPIDescribesEveryRoute checks the committed document against
// the route table the mux is built from: every route, its parameters and
// its success status, and nothing else.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	doc := decodeDoc(t, openAPIDocument)
	paths, _ := doc["paths"].(map[string]any)
	table := (&Server{}).routeTable()
	described := 0
	for _, p := range paths {
		described += len(p.(map[string]any))
	}
	if described != len(table) {
		t.Errorf("the document has %d operations, the route table %d routes: run make generate", described, len(table))
	}
	for _, rt := range table {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			op, ok := paths[rt.path].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)
			if !ok {
				t.Fatalf("not in openapi.json: run make generate")
			}
			var names []string
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				names = append(names, p.(map[string]any)["name"].(string))
			}
			var want []string
			for _, m := range regexp.MustCompile(`\{([a-z_]+)\}`).FindAllStringSubmatch(rt.path, -1) {
				want = append(want, m[1])
			}
			for _, q := range rt.query {
				want = append(want, q.name)
			}
			if !slices.Equal(names, want) {
				t.Errorf("parameters = %v, want %v", names, want)
			}
			if _, ok := op["responses"].(map[string]any)[strconv.Itoa(rt.status)]; !ok {
				t.Errorf("no %d response", rt.status)
			}
			if hasBody := rt.body != nil || rt.definition; hasBody != (op["requestBody"] != nil) {
				t.Errorf("request body described = %v, route has one = %v", op["requestBody"] != nil, hasBody)
			}
		})
	}
}

func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	doc := decodeDoc(t, openAPIDocument)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var walk func(v any)
	refs := 0
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				refs++
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if _, ok := schemas[name]; !ok {
					t.Errorf("dangling reference %s", ref)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	if refs == 0 {
		t.Fatal("no references at all: the document is empty")
	}
}

// TestOpenAPIIsFresh regenerates the document from the compiled-in
// descriptors, which lack the proto comments, and compares everything but
// the descriptions; make checkgenerate compares the whole file.
func TestOpenAPIIsFresh(t *testing.T) {
	t.Parallel()
	fresh, err := OpenAPI(protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	got, want := withoutDescriptions(decodeDoc(t, openAPIDocument)), withoutDescriptions(decodeDoc(t, fresh))
	if !reflect.DeepEqual(got, want) {
		t.Error("openapi.json is stale: run make generate")
	}
}

// withoutDescriptions drops every description, and unwraps the allOf a
// description puts around a reference.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if all, ok := x["allOf"].([]any); ok && len(all) == 1 && len(x) == 2 && x["description"] != nil {
			return withoutDescriptions(all[0])
		}
		out := map[string]any{}
		for k, e := range x {
			if k != "description" {
				out[k] = withoutDescriptions(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutDescriptions(e)
		}
		return out
	}
	return v
}
