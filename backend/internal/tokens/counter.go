package tokens

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/agents-os/agents/backend/internal/llm"
)

// The methods a Counter counts with, as the agent descriptor shows them.
const (
	MethodTokenizer = "tokenizer"
	MethodEstimate  = "estimate"
)

// Counter counts tokens for one model. It is safe for concurrent use; a
// Counter is cheap, and every Counter of a family shares one encoding.
type Counter struct {
	// enc is the model family's encoding, nil for a model counted with
	// Estimate.
	enc *encoding
	// echoThinking counts an assistant message's Thinking, for a flavor
	// that sends it back (llm's KimiV1).
	echoThinking bool
}

// ForModel is the Counter for the model named model, as an agent file or
// a provider names it ("gpt-4o-mini", "openai/gpt-5", "ft:gpt-4.1:org::id",
// "mistral-large-latest"). It counts the request as the OpenAIv1 flavor
// sends it; WithFlavor counts another flavor's.
func ForModel(model string) *Counter {
	return &Counter{enc: encodingFor(model)}
}

// WithFlavor is c counting the request as flavor f sends it: KimiV1 sends
// each assistant message's thinking back (or a placeholder for a
// tool-calling turn without it), the others leave it out.
func (c *Counter) WithFlavor(f llm.Flavor) *Counter {
	out := *c
	out.echoThinking = f == llm.FlavorKimi
	return &out
}

// Method is how c counts the model's requests: MethodTokenizer for a
// family with a tokenizer, even while it loads (Exact says when it is
// used), MethodEstimate otherwise.
func (c *Counter) Method() string {
	if c.enc == nil {
		return MethodEstimate
	}
	return MethodTokenizer
}

// Exact reports whether counts use the real tokenizer now: the model has
// one and it is loaded. Until then counts are estimates.
func (c *Counter) Exact() bool {
	return c.enc != nil && c.enc.codec.Load() != nil
}

// Ready starts loading the model's tokenizer, if it has one, and is
// closed once counts are exact; for a model counted with Estimate it is
// closed already.
func (c *Counter) Ready() <-chan struct{} {
	if c.enc == nil {
		return closed
	}
	c.enc.start()
	return c.enc.ready
}

// closed is the Ready channel of a Counter that has nothing to load.
var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Text counts s alone, without any framing: exactly when the model's
// tokenizer is loaded, with Estimate before (the first call starts the
// load) and for models without one.
func (c *Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	if c.enc != nil {
		if cd := c.enc.get(); cd != nil {
			// Count fails only for invalid UTF-8 in strict mode, which is
			// not the mode used; the estimate stands in if it ever does.
			if n, err := cd.Count(s); err == nil {
				return n
			}
		}
	}
	return Estimate(s)
}

// encoding is one of the tokenizer's encodings, loaded on first use and
// shared by the whole process: the cache of the vocabulary that
// codec builds once.
type encoding struct {
	name  string
	build func() *codec.Codec
	once  sync.Once
	// ready is closed when codec is set.
	ready chan struct{}
	codec atomic.Pointer[codec.Codec]
}

// The encodings of OpenAI's model families. Each is built on first use
// and never again; nothing is loaded until a count needs it.
var (
	o200k  = &encoding{name: "o200k_base", build: codec.NewO200kBase, ready: make(chan struct{})}
	cl100k = &encoding{name: "cl100k_base", build: codec.NewCl100kBase, ready: make(chan struct{})}
)

// get is the loaded codec, or nil while it loads; the first call starts
// the load in the background, so that no count waits for it.
func (e *encoding) get() *codec.Codec {
	if cd := e.codec.Load(); cd != nil {
		return cd
	}
	e.start()
	return nil
}

// start loads the encoding once. The goroutine ends when the vocabulary
// is built; it holds nothing but the encoding it fills.
func (e *encoding) start() {
	e.once.Do(func() {
		go func() {
			e.codec.Store(e.build())
			close(e.ready)
		}()
	})
}

// families maps OpenAI's model names to their encodings, by prefix. A
// prefix matches a name that is the prefix, or continues with anything
// but a letter or a digit ("gpt-4" is "gpt-4-turbo", not "gpt-4o"); the
// first match wins, so longer prefixes come first. gpt-oss's encoding,
// o200k_harmony, is o200k_base with more special tokens.
var families = []struct {
	prefix string
	enc    *encoding
}{
	{"gpt-4o", o200k},
	{"chatgpt-4o", o200k},
	{"gpt-4.1", o200k},
	{"gpt-4.5", o200k},
	{"gpt-5", o200k},
	{"gpt-oss", o200k},
	{"o1", o200k},
	{"o3", o200k},
	{"o4", o200k},
	{"gpt-4", cl100k},
	{"gpt-3.5", cl100k},
	{"gpt-35", cl100k}, // Azure's spelling of gpt-3.5
}

// encodingFor is the encoding of the model named model, or nil for a model
// counted with Estimate. A provider's prefix ("openai/", as routers write
// it) and a fine-tune's "ft:" are not part of the family's name.
func encodingFor(model string) *encoding {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimPrefix(name, "ft:")
	for _, f := range families {
		rest, ok := strings.CutPrefix(name, f.prefix)
		if ok && (rest == "" || !isLetter(rest[0]) && !isDigit(rest[0])) {
			return f.enc
		}
	}
	return nil
}
