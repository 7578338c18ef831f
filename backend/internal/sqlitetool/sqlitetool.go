// Package sqlitetool runs an agent's SqliteToolbox: the tool
// sqlite_<name>_query on a SQLite database, read-only, read-write, or
// versioned (each session queries a copy of its own, which the tool
// sqlite_<name>_promote writes back over the base file), as agents-exe
// names and shapes them.
//
// Every query opens the database afresh, so nothing is held between
// calls and a reload of the agents leaves nothing open. A statement
// may not attach another file (ATTACH, VACUUM INTO): the toolbox reaches
// its own database only.
package sqlitetool

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// maxResult bounds what a query answers, as a bash tool's output is
// bounded: rows past it are not read.
const maxResult = bashtool.DefaultMaxStdout

// busyTimeout is how long a query waits for another connection's lock
// on the file (another program, or a toolbox of another agent).
const busyTimeout = 5 * time.Second

// Copies is where versioned toolboxes keep their sessions' copies, one
// folder per session, and the locks of the database files this process
// opens, so two calls never copy or promote a file another call is using.
type Copies struct {
	root string

	mu    sync.Mutex
	roots map[string]bool // every root a toolbox keeps copies in
	locks map[string]*sync.Mutex
}

// NewCopies keeps copies under root (a folder of the server's data
// directory) unless a toolbox names its own storage root.
func NewCopies(root string) *Copies {
	return &Copies{root: root, roots: map[string]bool{root: true}, locks: map[string]*sync.Mutex{}}
}

// Forget removes a session's copies, in every root: its session was
// deleted.
func (c *Copies) Forget(sessionID string) error {
	if !sessionPattern.MatchString(sessionID) {
		return nil
	}
	c.mu.Lock()
	roots := make([]string, 0, len(c.roots))
	for r := range c.roots {
		roots = append(roots, r)
	}
	c.mu.Unlock()
	var errs []error
	for _, r := range roots {
		if err := os.RemoveAll(filepath.Join(r, sessionID)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Copies) use(root string) {
	c.mu.Lock()
	c.roots[root] = true
	c.mu.Unlock()
}

// lock returns the lock of one database file.
func (c *Copies) lock(path string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.locks[path]
	if !ok {
		l = &sync.Mutex{}
		c.locks[path] = l
	}
	return l
}

// sessionPattern is what a session id must look like to name a folder.
var sessionPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// Tools returns the tools of a SqliteToolbox: its query tool, and for a
// versioned one its promote tool. A versioned toolbox needs copies.
func Tools(box agentfile.BuiltinToolbox, copies *Copies) ([]tool.Tool, error) {
	db := box.Sqlite
	t := &toolbox{box: box}
	if db.Access == agentfile.SqliteVersioned {
		if copies == nil {
			return nil, fmt.Errorf("SqliteToolbox %s: this server keeps no per-session copies of databases", box.Name)
		}
		t.copies, t.root = copies, copies.root
		if db.StorageRoot != "" {
			t.root = db.StorageRoot
		}
		copies.use(t.root)
	} else if copies == nil {
		// Direct access still needs the file locks; a private set will do.
		copies = NewCopies("")
		t.copies = copies
	} else {
		t.copies = copies
	}
	out := []tool.Tool{&query{t}}
	if db.Access == agentfile.SqliteVersioned {
		out = append(out, &promote{t})
	}
	return out, nil
}

type toolbox struct {
	box    agentfile.BuiltinToolbox
	copies *Copies
	root   string // where the sessions' copies live (versioned only)
}

func (t *toolbox) prefix() string { return agentfile.SqliteToolPrefix + t.box.Name }

// copyOf is the path of a session's copy of the base database: named
// after the toolbox and the base, so two databases never share one.
func (t *toolbox) copyOf(sessionID string) (string, error) {
	if !sessionPattern.MatchString(sessionID) {
		return "", fmt.Errorf("session id %q cannot name a copy of the database", sessionID)
	}
	sum := sha256.Sum256([]byte(t.box.Sqlite.Path))
	return filepath.Join(t.root, sessionID, t.box.Name+"-"+hex.EncodeToString(sum[:4])+".sqlite"), nil
}

// query is sqlite_<name>_query.
type query struct{ t *toolbox }

func (q *query) Spec() tool.Spec {
	desc := q.t.box.Description
	if desc == "" {
		desc = "A SQLite database."
	}
	switch q.t.box.Sqlite.Access {
	case agentfile.SqliteReadOnly:
		desc += " Read-only: writes are refused."
	case agentfile.SqliteVersioned:
		desc += fmt.Sprintf(" This session works on a copy of its own; %s%s writes it back to the database.", q.t.prefix(), agentfile.SqlitePromoteSuffix)
	}
	return tool.Spec{
		Name:        q.t.prefix() + agentfile.SqliteQuerySuffix,
		Description: "Execute SQL on " + desc,
		Parameters:  json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string","description":"SQL query to execute"}},"required":["sql"],"additionalProperties":false}`),
		Kind:        session.ToolSystem,
		Source:      q.t.box.Sqlite.Path,
	}
}

func (q *query) Mode() session.CallMode { return session.CallAttached }

func (q *query) Execute(ctx context.Context, call tool.Call) tool.Result {
	var sqlText string
	if raw, ok := call.Args.Values()["sql"]; !ok || json.Unmarshal(raw, &sqlText) != nil || strings.TrimSpace(sqlText) == "" {
		return tool.Failed("no SQL given: call with {\"sql\": \"SELECT …\"}")
	}
	t := q.t
	path := t.box.Sqlite.Path
	if t.box.Sqlite.Access == agentfile.SqliteVersioned {
		copyPath, err := t.ensureCopy(ctx, call.Session.ID)
		if err != nil {
			return tool.Failed(err.Error())
		}
		path = copyPath
	}
	l := t.copies.lock(path)
	l.Lock()
	defer l.Unlock()
	text, err := run(ctx, path, t.box.Sqlite.Access == agentfile.SqliteReadOnly, sqlText)
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.OK(text)
}

// ensureCopy returns the session's copy of the base database, made from
// the base at the session's first query (empty when there is no base yet).
func (t *toolbox) ensureCopy(ctx context.Context, sessionID string) (string, error) {
	copyPath, err := t.copyOf(sessionID)
	if err != nil {
		return "", err
	}
	l := t.copies.lock(copyPath)
	l.Lock()
	defer l.Unlock()
	if _, err := os.Stat(copyPath); err == nil {
		return copyPath, nil
	}
	if err := os.MkdirAll(filepath.Dir(copyPath), 0o700); err != nil {
		return "", fmt.Errorf("the session's copy of the database cannot be made: %v", err)
	}
	base := t.box.Sqlite.Path
	bl := t.copies.lock(base)
	bl.Lock()
	defer bl.Unlock()
	if _, err := os.Stat(base); errors.Is(err, os.ErrNotExist) {
		return copyPath, nil // the copy starts empty, as the base would
	}
	// Made beside, then renamed: a copy that exists is whole.
	tmp := copyPath + ".new"
	_ = os.Remove(tmp)
	if err := backup(ctx, base, tmp); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("the session's copy of the database cannot be made from %s: %v", base, err)
	}
	if err := os.Rename(tmp, copyPath); err != nil {
		return "", fmt.Errorf("the session's copy of the database cannot be made: %v", err)
	}
	return copyPath, nil
}

// promote is sqlite_<name>_promote.
type promote struct{ t *toolbox }

func (p *promote) Spec() tool.Spec {
	desc := p.t.box.Description
	if desc == "" {
		desc = "the database"
	}
	return tool.Spec{
		Name:        p.t.prefix() + agentfile.SqlitePromoteSuffix,
		Description: "Promote this session's copy of " + desc + " to become the new baseline (writes it back to the source path).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Kind:        session.ToolSystem,
		Source:      p.t.box.Sqlite.Path,
	}
}

func (p *promote) Mode() session.CallMode { return session.CallAttached }

func (p *promote) Execute(ctx context.Context, call tool.Call) tool.Result {
	t := p.t
	copyPath, err := t.copyOf(call.Session.ID)
	if err != nil {
		return tool.Failed(err.Error())
	}
	cl := t.copies.lock(copyPath)
	cl.Lock()
	defer cl.Unlock()
	if _, err := os.Stat(copyPath); err != nil {
		return tool.Failed(fmt.Sprintf("nothing to promote: this session has not queried %s%s yet", t.prefix(), agentfile.SqliteQuerySuffix))
	}
	base := t.box.Sqlite.Path
	bl := t.copies.lock(base)
	bl.Lock()
	defer bl.Unlock()
	if err := restore(ctx, base, copyPath); err != nil {
		return tool.Failed(fmt.Sprintf("the copy could not be promoted to %s: %v", base, err))
	}
	out, _ := json.Marshal(map[string]string{"promoted_from": copyPath, "promoted_to": base})
	return tool.OK(string(out))
}

// dsn is the data source of the file at path: read-only when asked,
// with a busy timeout.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	}
	return (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
}

// open returns one connection to the file at path, which may reach no
// other file.
func open(ctx context.Context, path string, readOnly bool) (*sql.DB, *sql.Conn, error) {
	db, err := sql.Open("sqlite", dsn(path, readOnly))
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.Raw(func(driverConn any) error {
			r, ok := driverConn.(sqlite.AuthorizerRegisterer)
			if !ok {
				return errors.New("the SQLite driver has no authorizer")
			}
			return r.RegisterAuthorizer(ownFileOnly)
		})
		if err != nil {
			_ = conn.Close()
		}
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("%s cannot be opened: %v", path, err)
	}
	return db, conn, nil
}

// ownFileOnly refuses ATTACH and VACUUM INTO (which SQLite presents as
// an attach): either would let a query read or write any file the
// server can.
func ownFileOnly(action sqlite.AuthorizerActionCode, _, _, _, _ string) sqlite.AuthorizerReturnCode {
	if action == sqlite.AuthAttach || action == sqlite.AuthDetach {
		return sqlite.AuthorizerDeny
	}
	return sqlite.AuthorizerOK
}

// result is a query's answer, shaped as agents-exe shapes it.
type result struct {
	Columns       []string `json:"columns"`
	Rows          [][]any  `json:"rows"`
	RowCount      int      `json:"rowCount"`
	ExecutionTime float64  `json:"executionTime"`
	// Truncated says rows were left out to keep the answer within bounds.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
}

// run executes sqlText (one statement or several; the rows are the last
// one's) on the file at path.
func run(ctx context.Context, path string, readOnly bool, sqlText string) (string, error) {
	started := time.Now()
	db, conn, err := open(ctx, path, readOnly)
	if err != nil {
		return "", err
	}
	defer db.Close()
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, sqlText)
	if err != nil {
		return "", sqlError(err, readOnly)
	}
	defer rows.Close()
	res := result{Rows: [][]any{}}
	if res.Columns, err = rows.Columns(); err != nil {
		return "", sqlError(err, readOnly)
	}
	size := 0
	for rows.Next() {
		vals := make([]any, len(res.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", sqlError(err, readOnly)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = blobText(b)
			}
		}
		enc, _ := json.Marshal(vals)
		if size += len(enc) + 1; size > maxResult {
			res.Truncated = true
			res.Note = fmt.Sprintf("more rows were left out: an answer holds at most %d bytes; narrow the query (LIMIT, fewer columns)", maxResult)
			break
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return "", sqlError(err, readOnly)
	}
	res.RowCount = len(res.Rows)
	res.ExecutionTime = time.Since(started).Seconds()
	out, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	return bashtool.Cut(string(out), maxResult+1024), nil
}

// blobText is a blob as the model reads it: its text when it is text,
// else a note of its size.
func blobText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return fmt.Sprintf("<blob of %d bytes>", len(b))
}

// sqlError says what went wrong in the words of the toolbox.
func sqlError(err error, readOnly bool) error {
	msg := err.Error()
	switch {
	case readOnly && (strings.Contains(msg, "readonly database") || strings.Contains(msg, "query_only")):
		return fmt.Errorf("write refused: the database is read-only (SqliteReadOnly): %s", msg)
	case strings.Contains(msg, "authorization denied") || strings.Contains(msg, "not authorized"):
		return fmt.Errorf("refused: a query may not attach another database file (ATTACH, VACUUM INTO): %s", msg)
	}
	return fmt.Errorf("SQL error: %s", msg)
}

// backer is the backup side of the driver's connection.
type backer interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// backup copies the database at src to a new file dst with SQLite's
// online backup, which sees the database as one transaction would.
func backup(ctx context.Context, src, dst string) error {
	db, conn, err := open(ctx, src, true)
	if err != nil {
		return err
	}
	defer db.Close()
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		b, err := driverConn.(backer).NewBackup(dst)
		if err != nil {
			return err
		}
		return finish(b)
	})
}

// restore writes the database at src over the one at dst, in one
// transaction of dst.
func restore(ctx context.Context, dst, src string) error {
	db, conn, err := open(ctx, dst, false)
	if err != nil {
		return err
	}
	defer db.Close()
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		b, err := driverConn.(backer).NewRestore(src)
		if err != nil {
			return err
		}
		return finish(b)
	})
}

func finish(b *sqlite.Backup) error {
	_, err := b.Step(-1)
	if ferr := b.Finish(); err == nil {
		err = ferr
	}
	return err
}
