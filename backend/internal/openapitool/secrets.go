package openapitool

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

// credentials are what a toolbox adds to its requests: its headers, its
// token and its secrets. Those that name session params are resolved at
// each call; the others once, when the agent is built.
type credentials struct {
	headers map[string]string
	token   string
	secrets []secret
}

// secret is one secret, its value known (static) or to be taken from a
// session param at each call.
type secret struct {
	decl  agentfile.APISecret
	value string // set for every source but Param
}

// resolveCredentials reads the toolbox's secrets from the key store and
// the files they name. A secret that cannot be read makes the toolbox
// fail to load; the message names the secret, never a value.
func resolveCredentials(box agentfile.APIToolbox, key func(id string) (string, bool)) (*credentials, error) {
	c := &credentials{headers: box.Headers, token: box.Token}
	for _, s := range box.Secrets {
		sec := secret{decl: s}
		var raw string
		switch s.Source {
		case agentfile.SecretGiven:
			raw = s.Ref
		case agentfile.SecretAPIKey, agentfile.SecretEnvVar:
			v, ok := "", false
			if key != nil {
				v, ok = key(s.Ref)
			}
			if !ok {
				return nil, fmt.Errorf("%s: the server has no key %q (in its keys file or environment)", s.Field, s.Ref)
			}
			raw = v
		case agentfile.SecretFileSystem:
			data, err := os.ReadFile(s.Ref)
			if err != nil {
				return nil, fmt.Errorf("%s: read %s: %w", s.Field, s.Ref, unwrapPath(err))
			}
			raw = string(data)
		case agentfile.SecretParam:
			c.secrets = append(c.secrets, sec)
			continue
		}
		v, err := decode(s, raw)
		if err != nil {
			return nil, err
		}
		sec.value = v
		c.secrets = append(c.secrets, sec)
	}
	return c, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// decode applies a secret's decoder to its raw value.
func decode(s agentfile.APISecret, raw string) (string, error) {
	switch s.Decoding {
	case agentfile.DecodeBase64:
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
		if err != nil {
			return "", fmt.Errorf("%s: the value is not valid base64", s.Field)
		}
		return string(b), nil
	case agentfile.DecodeHex:
		b, err := hex.DecodeString(strings.TrimSpace(raw))
		if err != nil {
			return "", fmt.Errorf("%s: the value is not valid hexadecimal", s.Field)
		}
		return string(b), nil
	}
	if s.TrimNewlines {
		return strings.TrimRight(raw, "\r\n"), nil
	}
	return raw, nil
}

// apply adds the credentials to a request: the headers, then the token,
// then the secrets, each over what came before (the model's header
// parameters come first, so it cannot replace them). params are the
// session's; without a session (the description's fetch), what names a
// param is left out. It returns the values it sent,
// which answers must not show, and an error naming a param the session
// lacks.
func (c *credentials) apply(h http.Header, q url.Values, inSession bool, params map[string]string) (sent []string, err error) {
	expand := func(v string) (string, bool, error) {
		refs := agentfile.ParamRefs(v)
		if len(refs) == 0 {
			return v, true, nil
		}
		if !inSession {
			return "", false, nil
		}
		out, missing := agentfile.ExpandParams(v, params)
		if len(missing) > 0 {
			return "", false, fmt.Errorf("the session has no value for the param %s", strings.Join(missing, ", "))
		}
		for _, ref := range refs {
			sent = append(sent, params[ref])
		}
		return out, true, nil
	}
	for _, name := range sortedKeys(c.headers) {
		v, ok, err := expand(c.headers[name])
		if err != nil {
			return sent, err
		}
		if ok {
			h.Set(name, v)
		}
	}
	if c.token != "" {
		v, ok, err := expand(c.token)
		if err != nil {
			return sent, err
		}
		if ok {
			h.Set("Authorization", "Bearer "+v)
			sent = append(sent, v)
		}
	}
	for _, s := range c.secrets {
		v := s.value
		if s.decl.Source == agentfile.SecretParam {
			if !inSession {
				continue
			}
			raw, ok := params[s.decl.Ref]
			if !ok {
				return sent, fmt.Errorf("the session has no value for the param %s", s.decl.Ref)
			}
			if v, err = decode(s.decl, raw); err != nil {
				return sent, err
			}
		}
		sent = append(sent, v)
		if s.decl.Header != "" {
			h.Set(s.decl.Header, strings.ReplaceAll(s.decl.Template, "{{secret}}", v))
		} else {
			q.Set(s.decl.Query, v)
		}
	}
	return sent, nil
}

// static are the secret values known without a session, which no answer
// or error may show either.
func (c *credentials) static() []string {
	var out []string
	for _, s := range c.secrets {
		if s.decl.Source != agentfile.SecretParam {
			out = append(out, s.value)
		}
	}
	return out
}

// minRedacted is the shortest secret blotted out of answers: shorter
// values (a "1", an "id") would blot out ordinary text, and are no
// secrets worth the name.
const minRedacted = 4

// redact replaces every secret of values in text with [redacted], so
// that a server echoing a request, or an error quoting one, shows none.
func redact(text string, values []string) string {
	values = slices.Clone(values)
	// Longest first, so that a secret containing another is blotted out
	// whole.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		if len(v) >= minRedacted {
			text = strings.ReplaceAll(text, v, "[redacted]")
			if e := url.QueryEscape(v); e != v {
				text = strings.ReplaceAll(text, e, "[redacted]")
			}
		}
	}
	return text
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
