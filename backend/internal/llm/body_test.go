package llm

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRequestBodyReader(t *testing.T) {
	t.Parallel()
	msg := func(s string) EncodedMessage { return EncodedMessage{flavor: FlavorOpenAI, json: []byte(s)} }
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			b := requestBody{prefix: []byte(`{"messages":[`), suffix: []byte(`]}`)}
			var want []string
			for i := range n {
				b.messages = append(b.messages, msg(fmt.Sprintf(`{"n":%d}`, i)))
				want = append(want, fmt.Sprintf(`{"n":%d}`, i))
			}
			content := []byte(`{"messages":[` + strings.Join(want, ",") + `]}`)
			if got := b.bytes(); !bytes.Equal(got, content) || b.size() != len(content) {
				t.Fatalf("bytes() = %s (size %d), want %s", got, b.size(), content)
			}
			// Read by any amount, with WriteTo after a partial read, as
			// io.Reader's contract says.
			if err := iotest.TestReader(b.reader(), content); err != nil {
				t.Error(err)
			}
			got, err := io.ReadAll(iotest.OneByteReader(b.reader()))
			if err != nil || !bytes.Equal(got, content) {
				t.Errorf("one byte at a time: %s, %v", got, err)
			}
			r := b.reader()
			head := make([]byte, 5)
			if _, err := io.ReadFull(r, head); err != nil {
				t.Fatal(err)
			}
			var rest bytes.Buffer
			if _, err := r.(io.WriterTo).WriteTo(&rest); err != nil || !bytes.Equal(append(head, rest.Bytes()...), content) {
				t.Errorf("WriteTo after 5 bytes: %s%s, %v", head, rest.Bytes(), err)
			}
		})
	}
}
