package openapitool

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v2 "github.com/pb33f/libopenapi/datamodel/high/v2"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// operation is one operation of a description, whatever its version:
// parameters and body with their schemas resolved.
type operation struct {
	Method      string // upper case
	Path        string // the path template, "/items/{itemId}"
	OperationID string
	Summary     string
	Description string
	Params      []param
	Body        *requestBody
}

// param is one parameter of an operation.
type param struct {
	Name        string
	In          string // path, query or header
	Description string
	Required    bool
	Schema      map[string]any
	// Ref is the $ref the operation named the parameter by, if any
	// ("#/parameters/rowFilter.tasks.id" in a PostgREST description).
	Ref string
}

// requestBody is an operation's JSON body.
type requestBody struct {
	Description string
	Required    bool
	Schema      map[string]any
}

// parseSpec reads a description, OpenAPI 3.x or Swagger 2.0, into its
// operations, in the order the description gives them. References are
// resolved inside the document only: libopenapi's default configuration
// follows no reference to a file or a remote URL.
func parseSpec(data []byte) (ops []*operation, err error) {
	// The description comes from outside the server: should the parser
	// fail on some shape of it by panicking, that is this description's
	// load error, not the server's end.
	defer func() {
		if p := recover(); p != nil {
			ops, err = nil, fmt.Errorf("the description could not be read: %v", p)
		}
	}()
	doc, err := libopenapi.NewDocument(data)
	if err != nil {
		return nil, fmt.Errorf("not an OpenAPI description: %w", err)
	}
	switch doc.GetSpecInfo().SpecFormat {
	case datamodel.OAS2:
		m, err := doc.BuildV2Model()
		if m == nil {
			return nil, fmt.Errorf("the Swagger 2.0 description does not read: %w", err)
		}
		return v2Operations(&m.Model), nil
	case datamodel.OAS3, datamodel.OAS31, datamodel.OAS32:
		// A model with errors is one whose circular references could not
		// be resolved: the schemas keep those as $refs, which toolSchema
		// turns into open schemas.
		m, err := doc.BuildV3Model()
		if m == nil {
			return nil, fmt.Errorf("the OpenAPI description does not read: %w", err)
		}
		return v3Operations(&m.Model), nil
	}
	return nil, errors.New("not an OpenAPI 3.x or Swagger 2.0 description (no \"openapi\" or \"swagger\" version)")
}

func v3Operations(doc *v3.Document) []*operation {
	var ops []*operation
	if doc.Paths == nil || doc.Paths.PathItems == nil {
		return nil
	}
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method, o := range item.GetOperations().FromOldest() {
			op := &operation{Method: strings.ToUpper(method), Path: path, OperationID: o.OperationId, Summary: o.Summary, Description: o.Description}
			shared := v3Params(item.Parameters, nil)
			own := v3Params(o.Parameters, lowRefs3(o))
			op.Params = mergeParams(shared, own)
			if rb := o.RequestBody; rb != nil && rb.Content != nil {
				if schema := jsonContent3(rb); schema != nil {
					op.Body = &requestBody{Description: rb.Description, Required: rb.Required != nil && *rb.Required, Schema: resolve(schema)}
				}
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// lowRefs3 are the $refs an operation named its parameters by.
func lowRefs3(o *v3.Operation) []string {
	low := o.GoLow()
	if low == nil {
		return nil
	}
	refs := make([]string, len(low.Parameters.Value))
	for i, p := range low.Parameters.Value {
		if p.IsReference() {
			refs[i] = p.GetReference()
		}
	}
	return refs
}

func v3Params(list []*v3.Parameter, refs []string) []param {
	var out []param
	for i, p := range list {
		if p == nil || (p.In != "path" && p.In != "query" && p.In != "header") {
			continue // cookies are not sent
		}
		pr := param{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required != nil && *p.Required || p.In == "path"}
		if i < len(refs) {
			pr.Ref = refs[i]
		}
		switch {
		case p.Schema != nil:
			pr.Schema = resolve(p.Schema)
		case p.Content != nil:
			for _, mt := range p.Content.FromOldest() {
				if mt != nil && mt.Schema != nil {
					pr.Schema = resolve(mt.Schema)
					break
				}
			}
		}
		out = append(out, pr)
	}
	return out
}

// jsonContent3 is the schema of a body's JSON media type, or of its first
// one when none is JSON (agents-exe takes the first).
func jsonContent3(rb *v3.RequestBody) *base.SchemaProxy {
	var first *base.SchemaProxy
	for ct, mt := range rb.Content.FromOldest() {
		if mt == nil || mt.Schema == nil {
			continue
		}
		if isJSON(ct) {
			return mt.Schema
		}
		if first == nil {
			first = mt.Schema
		}
	}
	return first
}

func isJSON(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || ct == "*/*"
}

func v2Operations(doc *v2.Swagger) []*operation {
	var ops []*operation
	if doc.Paths == nil || doc.Paths.PathItems == nil {
		return nil
	}
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method, o := range item.GetOperations().FromOldest() {
			op := &operation{Method: strings.ToUpper(method), Path: path, OperationID: o.OperationId, Summary: o.Summary, Description: o.Description}
			shared, _ := v2Params(item.Parameters, nil)
			own, body := v2Params(o.Parameters, lowRefs2(o))
			op.Params = mergeParams(shared, own)
			op.Body = body
			if op.Body == nil {
				_, op.Body = v2Params(item.Parameters, nil)
			}
			ops = append(ops, op)
		}
	}
	return ops
}

func lowRefs2(o *v2.Operation) []string {
	low := o.GoLow()
	if low == nil {
		return nil
	}
	refs := make([]string, len(low.Parameters.Value))
	for i, p := range low.Parameters.Value {
		if p.IsReference() {
			refs[i] = p.GetReference()
		}
	}
	return refs
}

// v2Params reads Swagger 2.0 parameters: a body parameter is the body;
// form data is not sent.
func v2Params(list []*v2.Parameter, refs []string) ([]param, *requestBody) {
	var out []param
	var body *requestBody
	for i, p := range list {
		if p == nil {
			continue
		}
		required := p.Required != nil && *p.Required
		if p.In == "body" {
			if p.Schema != nil {
				body = &requestBody{Description: p.Description, Required: required, Schema: resolve(p.Schema)}
			}
			continue
		}
		if p.In != "path" && p.In != "query" && p.In != "header" {
			continue
		}
		pr := param{Name: p.Name, In: p.In, Description: p.Description, Required: required || p.In == "path", Schema: v2Schema(p)}
		if i < len(refs) {
			pr.Ref = refs[i]
		}
		out = append(out, pr)
	}
	return out, body
}

// v2Schema is the JSON Schema of a Swagger 2.0 parameter that is not a
// body: its type, format, enum and items.
func v2Schema(p *v2.Parameter) map[string]any {
	s := map[string]any{}
	if p.Type != "" && p.Type != "file" {
		s["type"] = p.Type
	}
	if p.Format != "" {
		s["format"] = p.Format
	}
	if len(p.Enum) > 0 {
		s["enum"] = yamlValues(p.Enum)
	}
	if p.Items != nil {
		s["items"] = v2Items(p.Items, 0)
	}
	return s
}

func v2Items(it *v2.Items, depth int) map[string]any {
	s := map[string]any{}
	if it.Type != "" {
		s["type"] = it.Type
	}
	if it.Format != "" {
		s["format"] = it.Format
	}
	if len(it.Enum) > 0 {
		s["enum"] = yamlValues(it.Enum)
	}
	if it.Items != nil && depth < maxSchemaDepth {
		s["items"] = v2Items(it.Items, depth+1)
	}
	return s
}

// yamlValues decodes enum values, YAML nodes of libopenapi's YAML
// library (named by what they do, so that this package does not depend
// on the library itself).
func yamlValues[N interface{ Decode(any) error }](nodes []N) []any {
	var out []any
	for _, n := range nodes {
		var v any
		if n.Decode(&v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// mergeParams is the path item's parameters overridden by the
// operation's (same name and place), then the operation's others.
func mergeParams(shared, own []param) []param {
	var out []param
	for _, s := range shared {
		if !slices.ContainsFunc(own, func(o param) bool { return o.Name == s.Name && o.In == s.In }) {
			out = append(out, s)
		}
	}
	return append(out, own...)
}

// resolve renders a schema with its $refs inlined, as a JSON value; a
// schema that does not render is an open one.
func resolve(proxy *base.SchemaProxy) map[string]any {
	s := proxy.Schema()
	if s == nil {
		return map[string]any{}
	}
	data, err := s.MarshalJSONInline()
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if json.Unmarshal(data, &out) != nil || out == nil {
		return map[string]any{}
	}
	return out
}
