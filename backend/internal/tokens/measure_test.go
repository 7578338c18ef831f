package tokens

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/llm"
)

// documented is OpenAI's documented count of a request (the cookbook's
// "How to count tokens with tiktoken"), computed with the exact encoder:
// each message is 3 tokens plus the tokens of each of its values (role,
// content, and here a call's name and arguments), the reply is primed
// with 3, and the tools are counted by the cookbook's rule for functions.
// With no network to ask a provider, it is the count the measurements
// compare with.
func documented(c *Counter, r llm.Request) int {
	n := 3
	for _, m := range r.Messages {
		n += 3 + c.Text(string(m.Role)) + c.Text(m.Text) + ImageTokens*len(m.Images)
		for _, call := range m.ToolCalls {
			n += c.Text(call.Name) + c.Text(call.Arguments)
		}
	}
	return n + documentedTools(c, r.Tools)
}

// documentedTools is the cookbook's count of function definitions: 7 for
// each function (10 under cl100k_base), the tokens of "name:description",
// 3 for the properties, 3 and "key:type:description" for each, 3 for each
// enum value and the value, 3 fewer for an enum, 12 for the list.
func documentedTools(c *Counter, tools []llm.ToolSpec) int {
	if len(tools) == 0 {
		return 0
	}
	funcInit := 7
	if c.enc == cl100k {
		funcInit = 10
	}
	n := 12
	for _, t := range tools {
		n += funcInit + c.Text(t.Name+":"+strings.TrimSuffix(t.Description, "."))
		var schema struct {
			Properties map[string]struct {
				Type        string   `json:"type"`
				Description string   `json:"description"`
				Enum        []string `json:"enum"`
			} `json:"properties"`
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				panic(err)
			}
		}
		if len(schema.Properties) > 0 {
			n += 3
		}
		for key, p := range schema.Properties {
			n += 3
			if len(p.Enum) > 0 {
				n -= 3
				for _, v := range p.Enum {
					n += 3 + c.Text(v)
				}
			}
			n += c.Text(key + ":" + p.Type + ":" + strings.TrimSuffix(p.Description, "."))
		}
	}
	return n
}

// ratios gathers the ratios of one measure and reports their range.
type ratios struct{ min, max, sum, n float64 }

func (r *ratios) add(got, want int) {
	if want == 0 {
		return
	}
	x := float64(got) / float64(want)
	if r.n == 0 {
		r.min, r.max = x, x
	}
	r.min, r.max, r.sum, r.n = math.Min(r.min, x), math.Max(r.max, x), r.sum+x, r.n+1
}

func (r ratios) String() string {
	return fmt.Sprintf("min %.3f  max %.3f  mean %.3f  (%d)", r.min, r.max, r.sum/r.n, int(r.n))
}

// strings of a request that Text counts, every one of them.
func pieces(r llm.Request) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.Text, m.Thinking)
		for _, c := range m.ToolCalls {
			out = append(out, c.Name, c.Arguments)
		}
	}
	for _, t := range r.Tools {
		out = append(out, t.Name, t.Description, string(t.Parameters))
	}
	return out
}

// TestMeasure measures each method's error over the corpus against
// OpenAI's documented count under both encodings, fails where a bound is
// broken, and logs the figures (go test -run TestMeasure -v) that
// BENCHMARKS.md reports:
//
//   - the estimate is never below the exact count, for each text, each
//     message and each request;
//   - the exact counter is never below the documented count, equal to it
//     for messages of text alone, and its framing error is what it adds
//     for tool calls, tool results and tool definitions.
func TestMeasure(t *testing.T) {
	t.Parallel()
	conversations := corpus(t)
	est := ForModel("mistral-large-latest")
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		exact := load(t, ForModel(model))
		var texts, msgs, reqs, framing, tools ratios
		for _, conv := range conversations {
			for _, s := range pieces(conv.req) {
				if s != "" {
					if Estimate(s) < exact.Text(s) {
						t.Errorf("%s: %s: estimate %d below %d for %.60q", exact.enc.name, conv.name, Estimate(s), exact.Text(s), s)
					}
					texts.add(Estimate(s), exact.Text(s))
				}
			}
			for _, m := range conv.req.Messages {
				one := llm.Request{Messages: []llm.Message{m}}
				want := documented(exact, one) - replyPriming
				if got := est.Message(m); got < want {
					t.Errorf("%s: %s: estimated message %d below %d", exact.enc.name, conv.name, got, want)
				}
				msgs.add(est.Message(m), want)
				got := exact.Message(m)
				if got < want || got != want && len(m.ToolCalls) == 0 && m.Role != llm.RoleTool {
					t.Errorf("%s: %s: exact message %d, documented %d", exact.enc.name, conv.name, got, want)
				}
			}
			want := documented(exact, conv.req)
			if got := est.Request(conv.req); got < want {
				t.Errorf("%s: %s: estimated request %d below %d", exact.enc.name, conv.name, got, want)
			}
			reqs.add(est.Request(conv.req), want)
			framing.add(exact.Request(conv.req), want)
			tools.add(exact.Tools(conv.req.Tools), documentedTools(exact, conv.req.Tools))
			t.Logf("%s: %-45s documented %6d  exact %6d  estimate %6d", exact.enc.name, conv.name, want, exact.Request(conv.req), est.Request(conv.req))
		}
		t.Logf("%s: estimate / exact, each text:       %v", exact.enc.name, texts)
		t.Logf("%s: estimate / documented, each message: %v", exact.enc.name, msgs)
		t.Logf("%s: estimate / documented, each request: %v", exact.enc.name, reqs)
		t.Logf("%s: exact / documented, each request:    %v", exact.enc.name, framing)
		t.Logf("%s: exact / documented, tool definitions: %v", exact.enc.name, tools)
	}
}

// The estimate of the testdata files, whole, against both encodings.
func TestMeasureFiles(t *testing.T) {
	t.Parallel()
	o, cl := load(t, ForModel("gpt-4o")), load(t, ForModel("gpt-4"))
	for name, parts := range texts(t) {
		s := strings.Join(parts, "")
		no, ncl := o.Text(s), cl.Text(s)
		if e := Estimate(s); e < max(no, ncl) {
			t.Errorf("%s: estimate %d below %d", name, e, max(no, ncl))
		}
		t.Logf("%-12s %6d bytes  o200k %5d (%.2f bytes a token)  cl100k %5d (%.2f)  estimate %5d (%.2f×, %.2f×)  bytes/3 %.2f×",
			name, len(s), no, float64(len(s))/float64(no), ncl, float64(len(s))/float64(ncl),
			Estimate(s), float64(Estimate(s))/float64(no), float64(Estimate(s))/float64(ncl), float64(ceilDiv(len(s), 3))/float64(max(no, ncl)))
	}
}

func TestEstimateCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello world", 4}, // ceil(5/3) twice, the space joins "world"
		{"12345", 2},       // 123 45
		{"a1b2", 4},        // every switch of class is a token
		{"camelCase", 4},   // camel, Case: 2 each
		{"  x", 2},         // a space alone, then " x"
		{"{\"a\": 1}", 6},  // {" a ": then the space before a digit, 1, }
		{"数据", 3},          // 1.5 a CJK character
		{"é", 1},           // a 2-byte character
		{"😀", 3},           // a 4-byte character
		{"\xff", 1},        // a byte that is not UTF-8
		{"\n\n\n\n\n\n\n\n\n", 2},
	}
	for _, tt := range tests {
		if got := Estimate(tt.s); got != tt.want {
			t.Errorf("Estimate(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}
