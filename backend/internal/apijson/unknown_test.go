package apijson_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
)

// wideObject is an object of n keys no message has, first "zz" then
// k0…k(n-2), each holding 1.
func wideObject(n int) string {
	var b strings.Builder
	b.WriteString(`{"zz":1`)
	for i := range n - 1 {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}")
	return b.String()
}

// TestUnknownKeysAreRefusedAsRead (issue 33): a body of 100,000 unknown
// keys, at the top or in a nested message, is refused at its first
// unknown key, before the rest is read into anything: what reading it
// allocates does not grow with the keys after it. The error names that
// first key and lists the fields.
//
// Not parallel: testing.AllocsPerRun counts the whole process.
func TestUnknownKeysAreRefusedAsRead(t *testing.T) {
	for _, tc := range []struct {
		name, body, field string
		msg               proto.Message
	}{
		{"at the top", wideObject(100_000), "zz", &agentsv1.UpdateSessionRequest{}},
		{"in a nested message", `{"title":"t","budget":` + wideObject(100_000) + `}`, "budget.zz", &agentsv1.UpdateSessionRequest{}},
		{"in a list of messages", `{"agent":"a","message":{"attachments":[{"name":"a"},` + wideObject(100_000) + `]}}`, "message.attachments[1].zz", &agentsv1.CreateSessionRequest{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			var err error
			allocs := testing.AllocsPerRun(1, func() {
				proto.Reset(tc.msg)
				err = apijson.Unmarshal(body, tc.msg)
			})
			want := "field `" + tc.field + "` is not a field here"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %v, want %s…", err, want)
			}
			// A handful per key read before the first unknown one; the
			// 100,000 after it cost nothing.
			if allocs > 1000 {
				t.Errorf("reading allocated %.0f times: the keys after the first unknown one were read", allocs)
			}
		})
	}
}
