package openapitool

import (
	"strings"
)

// maxSchemaDepth bounds how deeply a tool's schema nests: deeper parts
// are left open. The arguments' decoder reads schemas 64 levels deep;
// the tool's own object and its groups take a few of those.
const maxSchemaDepth = 48

// schemaKeywords are the JSON Schema keywords a tool's schema keeps; the
// OpenAPI-only ones (xml, discriminator, example, readOnly, externalDocs,
// …) say nothing a model needs and some model APIs refuse them.
var schemaKeywords = map[string]bool{
	"type": true, "description": true, "title": true, "format": true, "enum": true, "const": true,
	"default": true, "properties": true, "required": true, "items": true, "additionalProperties": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "pattern": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
}

// toolSchema turns a resolved OpenAPI schema into the JSON Schema a tool
// offers: OpenAPI 3.0's "nullable" becomes a "null" type, a $ref left
// unresolved (a schema that contains itself) becomes an open schema
// saying so, and only JSON Schema keywords are kept.
func toolSchema(s map[string]any) map[string]any {
	return clean(s, 0)
}

func clean(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	if s == nil || depth > maxSchemaDepth {
		return out
	}
	if ref, ok := s["$ref"].(string); ok {
		name := ref[strings.LastIndex(ref, "/")+1:]
		out["description"] = "a " + name + " (the same shape as the enclosing " + name + ")"
		if d, ok := s["description"].(string); ok && d != "" {
			out["description"] = d
		}
		return out
	}
	for k, v := range s {
		if !schemaKeywords[k] {
			continue
		}
		switch k {
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				continue
			}
			cleaned := map[string]any{}
			for name, p := range props {
				if ps, ok := p.(map[string]any); ok {
					cleaned[name] = clean(ps, depth+1)
				} else if b, ok := p.(bool); ok {
					cleaned[name] = b
				}
			}
			out[k] = cleaned
		case "items", "additionalProperties", "not":
			switch sub := v.(type) {
			case map[string]any:
				out[k] = clean(sub, depth+1)
			case bool:
				out[k] = sub
			}
		case "allOf", "anyOf", "oneOf":
			list, ok := v.([]any)
			if !ok {
				continue
			}
			var cleaned []any
			for _, item := range list {
				if sub, ok := item.(map[string]any); ok {
					cleaned = append(cleaned, clean(sub, depth+1))
				}
			}
			out[k] = cleaned
		case "required":
			var names []any
			if list, ok := v.([]any); ok {
				for _, n := range list {
					if name, ok := n.(string); ok {
						names = append(names, name)
					}
				}
			}
			if len(names) > 0 {
				out[k] = names
			}
		default:
			out[k] = v
		}
	}
	if nullable, _ := s["nullable"].(bool); nullable {
		switch t := out["type"].(type) {
		case string:
			out["type"] = []any{t, "null"}
		case []any:
			out["type"] = append(t, "null")
		}
	}
	return out
}

// withDescription is s with its description replaced by desc, or, when
// desc is empty, kept.
func withDescription(s map[string]any, desc string) map[string]any {
	if desc != "" {
		s["description"] = desc
	}
	return s
}
