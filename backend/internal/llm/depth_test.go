package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// TestDeeplyNestedAnswersAreRefused: a stream chunk or a completion that
// nests past jsoncheck.MaxDepth (here in a field the client does not even
// read) fails the call before a decoder recurses into it, and is not
// retried: the same model would send it again.
func TestDeeplyNestedAnswersAreRefused(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	tests := []struct {
		name   string
		reply  reply
		stream bool
	}{
		{"stream chunk", reply{done: true, events: []string{`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],"x":` + deep + `}`}}, true},
		{"completion", reply{header: map[string]string{"Content-Type": "application/json"}, body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"x":` + deep + `}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, tt.reply)
			client, waits := testClient(t, fake.url(), FlavorOpenAI)
			var err error
			if tt.stream {
				_, err = client.Stream(context.Background(), basicRequest(), nil)
			} else {
				_, err = client.Complete(context.Background(), basicRequest())
			}
			var de *jsoncheck.DepthError
			if !errors.As(err, &de) {
				t.Fatalf("error %v, want a *jsoncheck.DepthError", err)
			}
			if Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
				t.Errorf("a nested answer was retried (%d requests)", fake.requestCount())
			}
		})
	}
}

// TestDeeplyNestedErrorBodyIsText: an error body nested past the limit is
// reported as the text it is, not decoded.
func TestDeeplyNestedErrorBodyIsText(t *testing.T) {
	t.Parallel()
	body := `{"error":{"message":"no","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}`
	code, message := parseErrorBody([]byte(body))
	if code != "" || message != body {
		t.Errorf("parseErrorBody = %q, %q; want the body as text", code, message)
	}
}
