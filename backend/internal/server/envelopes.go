package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/backend/internal/errs"
)

// checkEnvelopes sits in front of a Connect handler. The first read of a
// request's body names the procedure in the request's log line: connect-go
// reads a body only for a procedure it serves, and a body it cannot read
// fails before the interceptors, which name it otherwise.
//
// On the enveloped protocols (gRPC, gRPC-Web, Connect streaming), where
// each message comes after a flag byte and four bytes of length, it also
// refuses as invalid_argument two framing mistakes of a client that
// connect-go calls internal: a message flagged compressed in a request
// that names no encoding (a JSON body sent as grpc-web+json does it, its
// "{" read as the flag), and a body that ends inside a message.
func checkEnvelopes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
			b := &checkedBody{body: r.Body, r: r}
			if header, ok := encodingHeader(r.Header.Get("Content-Type")); ok {
				if enc := r.Header.Get(header); enc == "" || enc == "identity" {
					b.frames, b.encodingHeader = true, header
				}
			}
			r.Body = b
		}
		next.ServeHTTP(w, r)
	})
}

// encodingHeader is the header that names the compression of the messages
// of an enveloped protocol's Content-Type; false for the others.
func encodingHeader(contentType string) (string, bool) {
	switch {
	case strings.HasPrefix(contentType, "application/grpc"): // and grpc-web
		return "Grpc-Encoding", true
	case strings.HasPrefix(contentType, "application/connect+"):
		return "Connect-Content-Encoding", true
	}
	return "", false
}

// flagCompressed is the bit of an envelope's flag byte that says its
// message is compressed.
const flagCompressed = 0x01

// checkedBody is a request body read through the checks of checkEnvelopes.
type checkedBody struct {
	body  io.ReadCloser
	r     *http.Request
	named bool

	// frames says the body's envelopes are checked; encodingHeader is
	// the header that would name their compression.
	frames         bool
	encodingHeader string
	// prefix gathers the five bytes before a message, seen of them so
	// far; left counts the bytes of the message still to come, message
	// its number.
	prefix  [5]byte
	seen    int
	left    int64
	message int
	// err, once set, answers every read: a refused body stays refused.
	err error
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if !b.named {
		b.named = true
		if rec := recordOf(b.r.Context()); rec != nil && rec.procedure == "" {
			rec.procedure = b.r.URL.Path
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if !b.frames {
		return n, err
	}
	for i := 0; i < n; {
		if b.left > 0 {
			skip := min(b.left, int64(n-i))
			b.left -= skip
			i += int(skip)
			continue
		}
		if b.seen == 0 && p[i]&flagCompressed != 0 {
			b.refuse(b.compressedProblem(p[i]))
			if i == 0 {
				return 0, b.err
			}
			return i, nil // the messages before it; the refusal next
		}
		b.prefix[b.seen] = p[i]
		b.seen++
		i++
		if b.seen == len(b.prefix) {
			b.left = int64(binary.BigEndian.Uint32(b.prefix[1:]))
			b.seen = 0
			b.message++
		}
	}
	if errors.Is(err, io.EOF) && (b.seen > 0 || b.left > 0) {
		b.refuse(b.cutShort())
		return n, b.err
	}
	return n, err
}

func (b *checkedBody) compressedProblem(flag byte) string {
	msg := fmt.Sprintf("message %d is flagged compressed (flag byte 0x%02x) but the request names no encoding in %s: send it uncompressed or name its encoding", b.message+1, flag, b.encodingHeader)
	if flag == '{' {
		msg += "; a JSON body must be framed too: each message after a flag byte and four bytes of length"
	}
	return msg
}

func (b *checkedBody) cutShort() string {
	if b.seen > 0 {
		return fmt.Sprintf("the body ends inside message %d: %d of the 5 bytes of its flags and length", b.message+1, b.seen)
	}
	return fmt.Sprintf("the body ends inside message %d: %d of its %d bytes missing", b.message, b.left, binary.BigEndian.Uint32(b.prefix[1:]))
}

// refuse sets the error every later read answers: a Connect error, which
// connect-go passes on as it is, and the request's log line learns.
func (b *checkedBody) refuse(problem string) {
	err := errs.Invalid(errs.CodeInvalidArgument, "%s", problem)
	noteError(b.r.Context(), connect.CodeInvalidArgument.String(), err)
	b.err = connectError(b.r.Context(), err)
}

func (b *checkedBody) Close() error { return b.body.Close() }
