package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"connectrpc.com/connect"
)

func frame(flag byte, msg string) string {
	return string(binary.BigEndian.AppendUint32([]byte{flag}, uint32(len(msg)))) + msg
}

// TestCheckedBodyFollowsFramesAcrossReads: the check finds the flag byte
// of every message however the body's reads cut it, passes every byte
// before a refusal, and refuses from then on.
func TestCheckedBodyFollowsFramesAcrossReads(t *testing.T) {
	t.Parallel()
	two := frame(0, "hello") + frame(0, "")
	for _, tc := range []struct {
		name, body, passed, problem string
	}{
		{"whole messages", two + frame(0, strings.Repeat("x", 300)), two + frame(0, strings.Repeat("x", 300)), ""},
		{"a compressed third", two + frame(1, "zz"), two, "message 3 is flagged compressed"},
		{"a flag in a message's text is no flag", frame(0, "\x01\x01\x01"), frame(0, "\x01\x01\x01"), ""},
		{"cut in a message", two + frame(0, "abcdef")[:8], two + frame(0, "abcdef")[:8], "the body ends inside message 3: 3 of its 6 bytes missing"},
		{"cut in a prefix", two + "\x00\x00", two + "\x00\x00", "the body ends inside message 3: 2 of the 5 bytes"},
	} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "one byte at a time": iotest.OneByteReader} {
			r := httptest.NewRequest("POST", "/agents.v1.AgentService/GetAgent", nil)
			b := &checkedBody{body: io.NopCloser(wrap(strings.NewReader(tc.body))), r: r, frames: true, encodingHeader: "Grpc-Encoding"}
			got, err := io.ReadAll(b)
			if !bytes.Equal(got, []byte(tc.passed)) {
				t.Errorf("%s, %s: passed %q, want %q", tc.name, name, got, tc.passed)
			}
			if tc.problem == "" {
				if err != nil {
					t.Errorf("%s, %s: %v", tc.name, name, err)
				}
				continue
			}
			if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%s, %s: %v, want invalid_argument saying %q", tc.name, name, err, tc.problem)
			}
			if _, again := b.Read(make([]byte, 8)); again != err {
				t.Errorf("%s, %s: a read after the refusal = %v, want the refusal again", tc.name, name, again)
			}
		}
	}
}
