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

// A body too large to be written whole is sent from its pieces, with the
// same bytes as the body written whole from the messages.
func TestLargeBodyFromPiecesMatchesWholeBody(t *testing.T) {
	t.Parallel()
	for _, flavor := range flavors {
		req := wideConversation()
		for len(req.Messages) < 200 {
			req.Messages = append(req.Messages, req.Messages[1:]...)
		}
		whole, err := encodeRequest(dialectFor(flavor), req, true)
		if err != nil {
			t.Fatal(err)
		}
		if req.Encoded, err = EncodeMessages(flavor, req.Messages); err != nil {
			t.Fatal(err)
		}
		pieces, err := encodeRequest(dialectFor(flavor), req, true)
		if err != nil {
			t.Fatal(err)
		}
		if pieces.size() <= maxFlatBody || len(pieces.messages) != len(req.Messages) {
			t.Fatalf("%s: a body of %d bytes in %d messages is not sent from its pieces", flavor, pieces.size(), len(pieces.messages))
		}
		got, err := io.ReadAll(pieces.reader())
		if err != nil || !bytes.Equal(got, whole.bytes()) {
			t.Errorf("%s: body from pieces differs from the whole body (%v)", flavor, err)
		}
	}
}
