package llm

import (
	"bytes"
	"io"
)

// requestBody is a request body as the pieces it is sent from: prefix,
// then the encoded messages joined with commas, then suffix. Messages a
// caller keeps (Request.Encoded) are read from where they are kept, not
// copied into a buffer the size of the history for every call; only a
// body of at most maxFlatBody is written whole, as its prefix alone.
type requestBody struct {
	prefix   []byte
	messages []EncodedMessage
	suffix   []byte
}

// size is the body's length in bytes.
func (b requestBody) size() int {
	n := len(b.prefix) + len(b.suffix) + max(0, len(b.messages)-1)
	for _, m := range b.messages {
		n += len(m.json)
	}
	return n
}

// pieces is how many pieces the body is read from: the prefix, the
// messages and the commas between them, the suffix.
func (b requestBody) pieces() int { return 2 + max(0, 2*len(b.messages)-1) }

// piece is piece i of the body's n pieces. It takes a pointer, and n, to
// stay cheap when called for each of thousands of messages.
func (b *requestBody) piece(i, n int) []byte {
	switch {
	case i == 0:
		return b.prefix
	case i == n-1:
		return b.suffix
	case i%2 == 0:
		return comma
	}
	return b.messages[(i-1)/2].json
}

var comma = []byte{','}

// bytes is the whole body in one slice: the prefix itself when it is the
// whole body.
func (b requestBody) bytes() []byte {
	if len(b.messages) == 0 && len(b.suffix) == 0 {
		return b.prefix
	}
	out := make([]byte, 0, b.size())
	n := b.pieces()
	for i := range n {
		out = append(out, b.piece(i, n)...)
	}
	return out
}

// maxFlatBody is the largest body sent from one slice of its own. The
// transport writes a body it knows is in memory into its buffer behind
// the headers, and a request that fits the buffer (4 KiB) goes out in one
// write; any other body makes it send the headers alone first. A larger
// body would not fit anyway: it is sent from its pieces, with no copy of
// its own.
const maxFlatBody = 3 << 10

// httpBody is the body as a request sends it, and how to read it again
// for a retry on a fresh connection.
func (b requestBody) httpBody() (io.ReadCloser, func() (io.ReadCloser, error)) {
	if b.size() <= maxFlatBody {
		// As io.NopCloser of a bytes.Reader, which the transport knows is
		// in memory.
		flat := b.bytes()
		return io.NopCloser(bytes.NewReader(flat)), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(flat)), nil }
	}
	return io.NopCloser(b.reader()), func() (io.ReadCloser, error) { return io.NopCloser(b.reader()), nil }
}

// reader reads the body from its start.
func (b requestBody) reader() io.Reader { return &bodyReader{body: b} }

type bodyReader struct {
	body requestBody
	// next is the piece being read and off how much of it was read.
	next, off int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for pieces := r.body.pieces(); n < len(p) && r.next < pieces; {
		piece := r.body.piece(r.next, pieces)
		k := copy(p[n:], piece[r.off:])
		n += k
		if r.off += k; r.off == len(piece) {
			r.next, r.off = r.next+1, 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes what is left of the body to w, piece by piece.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for pieces := r.body.pieces(); r.next < pieces; r.next, r.off = r.next+1, 0 {
		n, err := w.Write(r.body.piece(r.next, pieces)[r.off:])
		total += int64(n)
		if err != nil {
			r.off += n
			return total, err
		}
	}
	return total, nil
}
