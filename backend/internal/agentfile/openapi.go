package agentfile

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// APIKind says how an HTTP API's description becomes tools.
type APIKind string

// The kinds of HTTP API toolboxes.
const (
	// APIOpenAPI is an OpenAPI (3.x or Swagger 2.0) description: one tool
	// per operation (openApiToolboxes).
	APIOpenAPI APIKind = "openapi"
	// APIPostgREST is a PostgREST server's description: one tool per table
	// and method (postgrestToolboxes).
	APIPostgREST APIKind = "postgrest"
)

// The tags of openApiToolboxes and postgrestToolboxes entries. The
// "OnDisk" forms name a JSON file holding the entry's contents.
const (
	OpenAPIServerTag         = "OpenAPIServer"
	OpenAPIServerOnDiskTag   = "OpenAPIServerOnDisk"
	PostgRESTServerTag       = "PostgRESTServer"
	PostgRESTServerOnDiskTag = "PostgRESTServerOnDisk"
)

// APIToolbox is one HTTP API whose operations are offered as tools: an
// openApiToolboxes or postgrestToolboxes entry.
type APIToolbox struct {
	Kind APIKind
	// Field is where the entry is in the agent file, for messages:
	// "contents.openApiToolboxes[0]".
	Field string
	// SpecURL is the description's address as written; Spec is where it
	// is read from: an http:// or https:// URL, or an absolute file path
	// (SpecIsFile).
	SpecURL    string
	Spec       string
	SpecIsFile bool
	// BaseURL is where calls go: the operation's path is appended to it.
	BaseURL string
	// Name is the toolbox's part of its tool names; "" derives it from
	// SpecURL's host and port (see the toolbox's package).
	Name string
	// Description, when set, starts every tool's description.
	Description string
	// Headers are sent with every call; values may name session params
	// as {{param:NAME}}.
	Headers map[string]string
	// Token, when set, is sent as "Authorization: Bearer <token>"; it may
	// name session params as {{param:NAME}}.
	Token string
	// Filter keeps only the endpoints it matches; nil keeps all.
	Filter *EndpointFilter
	// Secrets are added to every request (and to the description's
	// fetch, those known when the agent is built).
	Secrets []APISecret
	// AllowedMethods, for PostgREST, are the HTTP methods offered as
	// tools, upper-case; empty: GET, HEAD and OPTIONS.
	AllowedMethods []string
	// Toolgroup, when set, is the group of an on-demand toolbox, as for
	// a bash toolbox.
	Toolgroup string
}

// EndpointFilter is a predicate on an API's endpoints, in agents-exe's
// form: {"tag": "PathPrefix", "contents": "/api"}, combined with And, Or
// and Not.
type EndpointFilter struct {
	Op string // one of FilterOps
	// Arg is the text the leaf predicates compare with.
	Arg string
	// Args are the operands of And, Or (two) and Not (one).
	Args []*EndpointFilter
}

// FilterOps are the tags of endpoint filters.
func FilterOps() []string {
	return []string{"And", "Or", "Not", "PathPrefix", "PathSuffix", "PathEqual", "PathContains",
		"MethodEquals", "OperationIdEquals", "TableNameEquals", "AlwaysTrue", "AlwaysFalse"}
}

// SecretSourceKind says where a secret's value comes from.
type SecretSourceKind string

// The secret sources. agents-exe's EnvVar is looked up in the server's
// key store, which reads the environment; its Command is not supported.
const (
	SecretGiven      SecretSourceKind = "Given"
	SecretAPIKey     SecretSourceKind = "ApiKey"
	SecretEnvVar     SecretSourceKind = "EnvVar"
	SecretFileSystem SecretSourceKind = "FileSystem"
	// SecretParam is this server's: a session param, given by the
	// client that starts the session.
	SecretParam SecretSourceKind = "Param"
)

// SecretDecoding says how a secret's raw value is decoded.
type SecretDecoding string

// The secret decodings.
const (
	DecodeClear  SecretDecoding = "Clear"
	DecodeBase64 SecretDecoding = "Base64"
	DecodeHex    SecretDecoding = "Hexadecimal"
)

// APISecret is one secret an API toolbox adds to its requests.
type APISecret struct {
	Field  string // where it is in the agent file, for messages
	Source SecretSourceKind
	// Ref is the source's argument: the value itself (Given), a key id
	// (ApiKey, EnvVar), an absolute file path (FileSystem) or a param
	// name (Param).
	Ref      string
	Decoding SecretDecoding
	// TrimNewlines, for Clear, drops trailing line ends from the value.
	TrimNewlines bool
	// Header names the header that carries the secret, formatted by
	// Template ({{secret}} is the value); else Query names the query
	// parameter that does.
	Header   string
	Template string
	Query    string
}

// String hides Ref, which is the secret itself for a Given source, so
// that no print of an agent shows it.
func (s APISecret) String() string {
	ref := s.Ref
	if s.Source == SecretGiven {
		ref = "[redacted]"
	}
	return fmt.Sprintf("%s(%s)", s.Source, ref)
}

// GoString is String, for %#v.
func (s APISecret) GoString() string { return s.String() }

// apiToolboxes reads openApiToolboxes and postgrestToolboxes. params are
// the agent's declared params, which headers, tokens and Param secrets
// may name.
func (d *decoder) apiToolboxes(c *object, where places, params []Param) []APIToolbox {
	var boxes []APIToolbox
	for _, k := range []struct {
		key          string
		kind         APIKind
		tag, diskTag string
	}{
		{"openApiToolboxes", APIOpenAPI, OpenAPIServerTag, OpenAPIServerOnDiskTag},
		{"postgrestToolboxes", APIPostgREST, PostgRESTServerTag, PostgRESTServerOnDiskTag},
	} {
		raw, ok := c.get(k.key)
		if !ok {
			continue
		}
		for i, item := range d.list(c.field(k.key), raw) {
			entry := d.object(index(c.field(k.key), i), item)
			if d.failed() {
				return nil
			}
			tag := d.requiredString(entry, "tag")
			contents, ok := entry.get("contents")
			if !ok {
				d.failf(entry.field("contents"), "required field is missing")
			}
			if d.failed() {
				return nil
			}
			var body *object
			switch tag {
			case k.tag:
				body = d.object(entry.field("contents"), contents)
			case k.diskTag:
				body = d.apiOnDisk(entry.field("contents"), contents, where)
			default:
				d.failf(entry.field("tag"), "unknown toolbox %q (want %s or %s)", tag, k.tag, k.diskTag)
			}
			if d.failed() {
				return nil
			}
			box := d.apiToolbox(body, k.kind, where, params)
			box.Field = index(c.field(k.key), i)
			d.warnUnread(entry, noIgnoredFields)
			boxes = append(boxes, box)
		}
	}
	if d.failed() {
		return nil
	}
	return boxes
}

// apiOnDisk reads the file an "OnDisk" entry names: a JSON object holding
// the contents. Its path is relative to the agent file's directory.
func (d *decoder) apiOnDisk(field string, raw json.RawMessage, where places) *object {
	written := d.nonEmptyString(field, raw)
	if d.failed() {
		return nil
	}
	if where.stored {
		d.failf(field, "a stored agent cannot read a toolbox from a file of the server; give the contents inline")
		return nil
	}
	path := written
	if !filepath.IsAbs(path) {
		path = filepath.Join(where.fileDir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		d.failf(field, "%s: %s", written, readReason(err))
		return nil
	}
	o := d.object(field+"("+written+")", data)
	return o
}

// apiToolbox reads one toolbox's contents. agents-exe decodes its keys
// capitalised ("SpecUrl") and documents them in camel case ("specUrl"):
// both are read.
func (d *decoder) apiToolbox(o *object, kind APIKind, where places, params []Param) APIToolbox {
	box := APIToolbox{Kind: kind}
	key, raw, ok := o.getFirst("SpecUrl", "specUrl")
	if !ok {
		d.failf(o.field(key), "required field is missing")
		return box
	}
	box.SpecURL = d.nonEmptyString(o.field(key), raw)
	box.Spec, box.SpecIsFile = d.specLocation(o.field(key), box.SpecURL, where)

	key, raw, ok = o.getFirst("BaseUrl", "baseUrl")
	if !ok {
		d.failf(o.field(key), "required field is missing")
		return box
	}
	box.BaseURL = d.nonEmptyString(o.field(key), raw)
	if u, err := url.Parse(box.BaseURL); !d.failed() && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		d.failf(o.field(key), "%q is not an http:// or https:// URL", box.BaseURL)
	}
	if key, raw, ok := o.getFirst("Name", "name"); ok {
		box.Name = d.nonEmptyString(o.field(key), raw)
		if !d.failed() && !validServerName(box.Name) {
			d.failf(o.field(key), "%q must be letters, digits, - and _ only: it is part of the tool names", box.Name)
		}
	}
	if key, raw, ok := o.getFirst("Description", "description"); ok {
		box.Description = d.str(o.field(key), raw)
	}
	if key, _, ok := o.getFirst("Headers", "headers"); ok {
		box.Headers = d.stringMap(o, key)
		for _, name := range slices.Sorted(maps.Keys(box.Headers)) {
			d.checkRefs(o.field(key)+"."+name, box.Headers[name], params)
		}
	}
	if key, raw, ok := o.getFirst("Token", "token"); ok {
		box.Token = d.str(o.field(key), raw)
		d.checkRefs(o.field(key), box.Token, params)
	}
	if key, raw, ok := o.getFirst("Filter", "filter"); ok {
		box.Filter = d.endpointFilter(o.field(key), raw, 0)
	}
	if key, raw, ok := o.getFirst("Secrets", "secrets"); ok {
		for i, item := range d.list(o.field(key), raw) {
			box.Secrets = append(box.Secrets, d.apiSecret(index(o.field(key), i), item, where, params))
		}
	}
	if kind == APIPostgREST {
		if key, raw, ok := o.getFirst("AllowedMethods", "allowedMethods"); ok {
			for i, m := range d.strings(o.field(key), raw) {
				m = strings.ToUpper(m)
				if !d.failed() && !slices.Contains(httpMethods, m) {
					d.failf(index(o.field(key), i), "unknown HTTP method %q (want one of %s)", m, strings.Join(httpMethods, ", "))
				}
				if !slices.Contains(box.AllowedMethods, m) {
					box.AllowedMethods = append(box.AllowedMethods, m)
				}
			}
		}
	}
	box.Toolgroup = d.activation(o)
	d.warnLifetime(o)
	return box
}

// httpMethods are the methods a PostgREST toolbox may offer.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// specLocation resolves where a description is read from. An http(s) URL
// is fetched; a file:// URL or a plain path is a file, a relative one
// taken from the agent file's directory (or, failing that, the working
// directory, where agents-exe resolves it).
func (d *decoder) specLocation(field, written string, where places) (string, bool) {
	if d.failed() {
		return "", false
	}
	if strings.HasPrefix(written, "http://") || strings.HasPrefix(written, "https://") {
		if u, err := url.Parse(written); err != nil || u.Host == "" {
			d.failf(field, "%q is not a valid URL", written)
		}
		return written, false
	}
	path := strings.TrimPrefix(written, "file://")
	if strings.Contains(path, "://") {
		d.failf(field, "%q: want an http://, https:// or file:// URL, or a file path", written)
		return "", false
	}
	if path == "" {
		d.failf(field, "%q names no file", written)
		return "", false
	}
	resolved, _ := d.toolPath(field, path, where)
	return resolved, true
}

// checkRefs refuses a {{param:NAME}} naming a param the agent does not
// declare: the value could never be sent as meant.
func (d *decoder) checkRefs(field, value string, params []Param) {
	for _, ref := range ParamRefs(value) {
		if !declaresParam(params, ref) {
			d.failf(field, "{{param:%s}} names a param the agent does not declare in \"params\"", ref)
		}
	}
}

func declaresParam(params []Param, name string) bool {
	return slices.ContainsFunc(params, func(p Param) bool { return p.Name == name })
}

// maxFilterDepth bounds how deeply filters nest, so that a file cannot
// make the reader recurse without end.
const maxFilterDepth = 32

// endpointFilter reads a filter: {"tag": "PathPrefix", "contents": "/x"},
// {"tag": "And", "contents": [f, g]}, {"tag": "Not", "contents": f},
// {"tag": "AlwaysTrue"}.
func (d *decoder) endpointFilter(field string, raw json.RawMessage, depth int) *EndpointFilter {
	if depth > maxFilterDepth {
		d.failf(field, "filters nest deeper than %d levels", maxFilterDepth)
		return nil
	}
	o := d.object(field, raw)
	if d.failed() {
		return nil
	}
	f := &EndpointFilter{Op: d.requiredString(o, "tag")}
	if d.failed() {
		return nil
	}
	contents, has := o.get("contents")
	switch f.Op {
	case "And", "Or":
		if !has {
			d.failf(o.field("contents"), "required field is missing")
			return nil
		}
		items := d.list(o.field("contents"), contents)
		if !d.failed() && len(items) != 2 {
			d.failf(o.field("contents"), "%s takes a list of two filters, got %d", f.Op, len(items))
		}
		for i, item := range items {
			f.Args = append(f.Args, d.endpointFilter(index(o.field("contents"), i), item, depth+1))
		}
	case "Not":
		if !has {
			d.failf(o.field("contents"), "required field is missing")
			return nil
		}
		f.Args = []*EndpointFilter{d.endpointFilter(o.field("contents"), contents, depth+1)}
	case "AlwaysTrue", "AlwaysFalse":
	default:
		if !slices.Contains(FilterOps(), f.Op) {
			d.failf(o.field("tag"), "unknown filter %q (want one of %s)", f.Op, strings.Join(FilterOps(), ", "))
			return nil
		}
		if !has {
			d.failf(o.field("contents"), "required field is missing")
			return nil
		}
		f.Arg = d.str(o.field("contents"), contents)
	}
	d.warnUnread(o, noIgnoredFields)
	return f
}

// apiSecret reads one secret, in agents-exe's form:
//
//	{"source": {"tag": "ApiKey", "contents": "petstore"},
//	 "decoder": {"tag": "Clear", "contents": true},
//	 "serializer": {"tag": "Header", "contents": ["Authorization", "Bearer {{secret}}"]}}
//
// The decoder may be left out (Clear, trailing line ends dropped).
func (d *decoder) apiSecret(field string, raw json.RawMessage, where places, params []Param) APISecret {
	s := APISecret{Field: field, Decoding: DecodeClear, TrimNewlines: true, Template: "{{secret}}"}
	o := d.object(field, raw)
	if d.failed() {
		return s
	}
	src, ok := o.get("source")
	if !ok {
		d.failf(o.field("source"), "required field is missing")
		return s
	}
	so := d.object(o.field("source"), src)
	if d.failed() {
		return s
	}
	s.Source = SecretSourceKind(d.requiredString(so, "tag"))
	contents, has := so.get("contents")
	if !has && !d.failed() {
		d.failf(so.field("contents"), "required field is missing")
	}
	if d.failed() {
		return s
	}
	switch s.Source {
	case SecretGiven:
		s.Ref = d.str(so.field("contents"), contents)
	case SecretAPIKey, SecretEnvVar:
		s.Ref = d.nonEmptyString(so.field("contents"), contents)
	case SecretParam:
		s.Ref = d.nonEmptyString(so.field("contents"), contents)
		if !d.failed() && !declaresParam(params, s.Ref) {
			d.failf(so.field("contents"), "%q names a param the agent does not declare in \"params\"", s.Ref)
		}
	case SecretFileSystem:
		written := d.nonEmptyString(so.field("contents"), contents)
		switch {
		case d.failed():
		case where.stored:
			d.failf(so.field("tag"), "a stored agent reads no file of the server; take the secret from a param (Param) or the key store (ApiKey)")
		case filepath.IsAbs(written):
			s.Ref = written
		default:
			s.Ref = filepath.Join(where.fileDir, written)
		}
	case "Command":
		d.failf(so.field("tag"), "a secret from a command is not supported by this server; take it from the key store (ApiKey, EnvVar), a file (FileSystem) or a session param (Param)")
	default:
		d.failf(so.field("tag"), "unknown secret source %q (want Given, ApiKey, EnvVar, FileSystem or Param)", s.Source)
	}
	d.warnUnread(so, noIgnoredFields)

	if dec, ok := o.get("decoder"); ok {
		do := d.object(o.field("decoder"), dec)
		if d.failed() {
			return s
		}
		s.Decoding = SecretDecoding(d.requiredString(do, "tag"))
		switch s.Decoding {
		case DecodeClear:
			s.TrimNewlines = d.optionalBool(do, "contents", true)
		case DecodeBase64, DecodeHex:
			do.get("contents")
		default:
			d.failf(do.field("tag"), "unknown decoder %q (want Clear, Base64 or Hexadecimal)", s.Decoding)
		}
		d.warnUnread(do, noIgnoredFields)
	}

	ser, ok := o.get("serializer")
	if !ok {
		d.failf(o.field("serializer"), "required field is missing")
		return s
	}
	sero := d.object(o.field("serializer"), ser)
	if d.failed() {
		return s
	}
	tag := d.requiredString(sero, "tag")
	contents, has = sero.get("contents")
	if !has && !d.failed() {
		d.failf(sero.field("contents"), "required field is missing")
	}
	if d.failed() {
		return s
	}
	switch tag {
	case "Header":
		// ["Name", "template"] or ["Name", null]; the header's name alone
		// is accepted too.
		if kindOf(contents) == "string" {
			s.Header = d.nonEmptyString(sero.field("contents"), contents)
			break
		}
		items := d.list(sero.field("contents"), contents)
		if !d.failed() && (len(items) < 1 || len(items) > 2) {
			d.failf(sero.field("contents"), "want [header name, template or null], got %d items", len(items))
			return s
		}
		s.Header = d.nonEmptyString(index(sero.field("contents"), 0), items[0])
		if len(items) == 2 && kindOf(items[1]) != "null" {
			s.Template = d.str(index(sero.field("contents"), 1), items[1])
		}
	case "QueryString":
		s.Query = d.nonEmptyString(sero.field("contents"), contents)
	default:
		d.failf(sero.field("tag"), "unknown serializer %q (want Header or QueryString)", tag)
	}
	d.warnUnread(sero, noIgnoredFields)
	d.warnUnread(o, noIgnoredFields)
	return s
}
