package store

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agents-os/agents/backend/internal/errs"
)

// cursor is the position after the last session of a page: listings are
// ordered by (created, id) descending, so the next page starts strictly
// below it. Keyset paging stays correct while sessions are created between
// pages and costs the same on page 1000 as on page 1, unlike OFFSET.
type cursor struct {
	created int64
	id      string
}

// encode makes the token opaque so clients do not build their own; the
// format may change between versions.
func (c cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.created, 10) + ":" + c.id))
}

// maxPageToken is far more than any token encode makes.
const maxPageToken = 512

func decodeCursor(token string) (cursor, error) {
	bad := errs.Invalid(errs.CodeInvalidPageToken, "malformed page token")
	if len(token) > maxPageToken {
		return cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return cursor{}, bad
	}
	created, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return cursor{}, bad
	}
	n, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		return cursor{}, bad
	}
	return cursor{created: n, id: id}, nil
}

// MaxQueryLength bounds ListFilter.Query, in characters. Escaped and
// wrapped in wildcards, the longest query stays far below the length of
// pattern a database accepts (SQLite: 50,000 bytes).
const MaxQueryLength = 256

// checkQuery refuses a query over MaxQueryLength.
func checkQuery(q string) error {
	if n := utf8.RuneCountInString(q); n > MaxQueryLength {
		return errs.Invalid(errs.CodeInvalidArgument, "query is %d characters, more than the limit of %d", n, MaxQueryLength)
	}
	return nil
}

// escapeLike quotes the LIKE wildcards in s for use with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// pageSize applies the defaults and the cap to a requested page size.
func pageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}
