package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agents-os/agents/backend/internal/store"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	tests := []struct {
		name string
		err  error
		want store.Violation
	}{
		{"unique", pg("23505"), store.ViolationUnique},
		{"foreign key", pg("23503"), store.ViolationForeignKey},
		{"check", pg("23514"), store.ViolationNone},
		{"syntax", pg("42601"), store.ViolationNone},
		{"undefined table", pg("42P01"), store.ViolationNone},
		{"connection failure", pg("08006"), store.ViolationUnavailable},
		{"admin shutdown", pg("57P01"), store.ViolationUnavailable},
		{"crash shutdown", pg("57P02"), store.ViolationUnavailable},
		{"starting up", pg("57P03"), store.ViolationUnavailable},
		{"serialization", pg("40001"), store.ViolationUnavailable},
		{"deadlock", pg("40P01"), store.ViolationUnavailable},
		{"too many connections", pg("53300"), store.ViolationUnavailable},
		{"disk full", pg("53100"), store.ViolationUnavailable},
		{"io error", pg("58030"), store.ViolationUnavailable},
		{"lock timeout", pg("55P03"), store.ViolationUnavailable},
		{"idle in transaction timeout", pg("25P03"), store.ViolationUnavailable},
		{"statement timeout", pg("57014"), store.ViolationUnavailable},
		{"read-only standby", pg("25006"), store.ViolationUnavailable},
		{"bad conn", fmt.Errorf("commit: %w", driver.ErrBadConn), store.ViolationUnavailable},
		{"conn closed", fmt.Errorf("query: %w", pgconn.ErrConnClosed), store.ViolationUnavailable},
		{"eof", io.EOF, store.ViolationUnavailable},
		{"unexpected eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), store.ViolationUnavailable},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, store.ViolationUnavailable},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), store.ViolationUnavailable},
		{"canceled", fmt.Errorf("query: %w", context.Canceled), store.ViolationNone},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), store.ViolationNone},
		{"other", errors.New("decode: bad json"), store.ViolationNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
