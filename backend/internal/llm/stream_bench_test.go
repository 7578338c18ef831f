package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/cputime"
)

// benchStream is the answer of the load tool's offline model: a short
// text in three chunks and a usage chunk, all in one write.
const benchStream = `data: {"id":"chatcmpl-canned","object":"chat.completion.chunk","created":0,"model":"load-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-canned","object":"chat.completion.chunk","created":0,"model":"load-model","choices":[{"index":0,"delta":{"content":"Done."},"finish_reason":null}]}

data: {"id":"chatcmpl-canned","object":"chat.completion.chunk","created":0,"model":"load-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"chatcmpl-canned","object":"chat.completion.chunk","created":0,"model":"load-model","choices":[],"usage":{"prompt_tokens":16,"completion_tokens":2,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

`

// BenchmarkStream is one streamed call over loopback HTTP to a server that
// reads the request and answers at once, for histories of a few sizes:
// what the client costs a step, with the server's small share.
// cpu-µs/op is the CPU time of the whole process (both ends) per call,
// which moves less than wall time on a busy machine.
func BenchmarkStream(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(benchStream)))
		_, _ = io.WriteString(w, benchStream)
	}))
	defer srv.Close()
	for _, turns := range []int{10, 300} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			c, err := New(Config{BaseURL: srv.URL + "/v1"})
			if err != nil {
				b.Fatal(err)
			}
			msgs := []Message{{Role: RoleSystem, Text: "You are the agent of the load test."}}
			for i := range turns {
				msgs = append(msgs, Message{Role: RoleUser, Text: fmt.Sprintf("prompt %d of the load test", i)})
				msgs = append(msgs, Message{Role: RoleAssistant, Text: "Done."})
			}
			msgs = append(msgs, Message{Role: RoleUser, Text: "the last prompt"})
			enc, err := EncodeMessages(FlavorOpenAI, msgs)
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Model: "load-model", Messages: msgs, Encoded: enc, SessionID: "e397e056-82d5-4294-b6c9-155acf41859a"}
			b.ReportAllocs()
			cpuBefore, cpuKnown := cputime.Process()
			for b.Loop() {
				resp, err := c.Stream(context.Background(), req, func(Delta) {})
				if err != nil || resp.Text != "Done." {
					b.Fatal(resp, err)
				}
			}
			if cpuAfter, _ := cputime.Process(); cpuKnown {
				b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			}
		})
	}
}
