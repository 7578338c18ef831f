package sqlitetool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

func box(name string, access agentfile.SqliteAccess, path string) agentfile.BuiltinToolbox {
	return agentfile.BuiltinToolbox{Kind: agentfile.SqliteToolboxKind, Name: name, Description: "test db.",
		Sqlite: agentfile.SqliteDatabase{Access: access, Path: path}}
}

// call runs t with args as the session sid and fails the test when the
// result's status is not want.
func call(t *testing.T, tl tool.Tool, sid, args string, want session.ResultStatus) string {
	t.Helper()
	a, err := tool.DecodeArgs(tl.Spec(), args)
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Spec().Name, args, err)
	}
	r := tl.Execute(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: a, Session: tool.Session{ID: sid}})
	if r.Status != want {
		t.Fatalf("%s %s = %v %q, want %v", tl.Spec().Name, args, r.Status, r.Text, want)
	}
	return r.Text
}

func TestReadWriteQueriesTheFileAndReadOnlyRefusesWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	rw, err := Tools(box("rw", agentfile.SqliteReadWrite, path), nil)
	if err != nil || len(rw) != 1 || rw[0].Spec().Name != "sqlite_rw_query" {
		t.Fatalf("tools = %v, %v", rw, err)
	}
	call(t, rw[0], "s1", `{"sql": "CREATE TABLE smoke (id INTEGER PRIMARY KEY, label TEXT, score REAL)"}`, session.ResultOK)
	call(t, rw[0], "s1", `{"sql": "DELETE FROM smoke; INSERT INTO smoke (label, score) VALUES ('baseline', 1.5)"}`, session.ResultOK)
	got := call(t, rw[0], "s1", `{"sql": "SELECT * FROM smoke"}`, session.ResultOK)
	if !strings.Contains(got, `"columns":["id","label","score"]`) || !strings.Contains(got, `"rows":[[1,"baseline",1.5]]`) || !strings.Contains(got, `"rowCount":1`) {
		t.Errorf("select = %s", got)
	}

	ro, _ := Tools(box("ro", agentfile.SqliteReadOnly, path), nil)
	if got := call(t, ro[0], "s1", `{"sql": "SELECT label FROM smoke"}`, session.ResultOK); !strings.Contains(got, "baseline") {
		t.Errorf("read-only select = %s", got)
	}
	for _, sql := range []string{
		"INSERT INTO smoke (label) VALUES ('sneaky')",
		"PRAGMA query_only = 0; DELETE FROM smoke",
		"CREATE TABLE other (x)",
	} {
		got := call(t, ro[0], "s1", `{"sql": "`+sql+`"}`, session.ResultError)
		if !strings.Contains(got, "read-only") {
			t.Errorf("%s: %s, want a read-only refusal", sql, got)
		}
	}
	if got := call(t, rw[0], "s1", `{"sql": "SELECT count(*) FROM smoke"}`, session.ResultOK); !strings.Contains(got, `"rows":[[1]]`) {
		t.Errorf("after the refused writes: %s", got)
	}
	if got := call(t, rw[0], "s1", `{"sql": "SELEC nonsense"}`, session.ResultError); !strings.HasPrefix(got, "SQL error: ") {
		t.Errorf("bad SQL: %s", got)
	}
}

// No query reaches another file: ATTACH and VACUUM INTO are refused.
func TestAQueryReachesNoOtherFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rw, _ := Tools(box("rw", agentfile.SqliteReadWrite, filepath.Join(dir, "db.sqlite")), nil)
	other := filepath.Join(dir, "other.sqlite")
	for _, sql := range []string{"ATTACH '" + other + "' AS o", "VACUUM INTO '" + other + "'"} {
		if got := call(t, rw[0], "s1", `{"sql": "`+sql+`"}`, session.ResultError); !strings.Contains(got, "may not attach") {
			t.Errorf("%s: %s", sql, got)
		}
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("%s was created", other)
	}
}

// A versioned toolbox gives each session a copy of the base, which the
// base and other sessions do not see until promoted; Forget removes a
// session's copies.
func TestVersionedSessionsWorkOnCopiesUntilPromoted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.sqlite")
	copies := NewCopies(filepath.Join(dir, "copies"))
	rw, _ := Tools(box("rw", agentfile.SqliteReadWrite, base), copies)
	ver, err := Tools(box("ver", agentfile.SqliteVersioned, base), copies)
	if err != nil || len(ver) != 2 || ver[0].Spec().Name != "sqlite_ver_query" || ver[1].Spec().Name != "sqlite_ver_promote" {
		t.Fatalf("tools = %v, %v", ver, err)
	}
	if _, err := Tools(box("ver", agentfile.SqliteVersioned, base), nil); err == nil {
		t.Error("a versioned toolbox without copies loaded")
	}
	query, promote := ver[0], ver[1]
	call(t, rw[0], "s1", `{"sql": "CREATE TABLE smoke (label TEXT); INSERT INTO smoke VALUES ('baseline')"}`, session.ResultOK)

	if got := call(t, promote, "s1", `{}`, session.ResultError); !strings.Contains(got, "nothing to promote") {
		t.Errorf("promote before any query: %s", got)
	}
	call(t, query, "s1", `{"sql": "INSERT INTO smoke VALUES ('versioned')"}`, session.ResultOK)
	if got := call(t, query, "s1", `{"sql": "SELECT label FROM smoke ORDER BY rowid"}`, session.ResultOK); !strings.Contains(got, `[["baseline"],["versioned"]]`) {
		t.Errorf("s1's copy: %s", got)
	}
	if got := call(t, query, "s2", `{"sql": "SELECT label FROM smoke"}`, session.ResultOK); !strings.Contains(got, `[["baseline"]]`) {
		t.Errorf("s2's copy: %s", got)
	}
	if got := call(t, rw[0], "s1", `{"sql": "SELECT label FROM smoke"}`, session.ResultOK); !strings.Contains(got, `[["baseline"]]`) {
		t.Errorf("the base before promote: %s", got)
	}
	if got := call(t, promote, "s1", `{}`, session.ResultOK); !strings.Contains(got, `"promoted_to":"`+base+`"`) {
		t.Errorf("promote: %s", got)
	}
	if got := call(t, rw[0], "s1", `{"sql": "SELECT label FROM smoke ORDER BY rowid"}`, session.ResultOK); !strings.Contains(got, `[["baseline"],["versioned"]]`) {
		t.Errorf("the base after promote: %s", got)
	}

	if err := copies.Forget("s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "copies", "s1")); !os.IsNotExist(err) {
		t.Errorf("s1's copies are still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "copies", "s2")); err != nil {
		t.Errorf("s2's copies went too: %v", err)
	}
}

// Rows past the bound of an answer are left out, with a note.
func TestALargeAnswerIsCut(t *testing.T) {
	t.Parallel()
	rw, _ := Tools(box("rw", agentfile.SqliteReadWrite, filepath.Join(t.TempDir(), "db.sqlite")), nil)
	got := call(t, rw[0], "s1", `{"sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n LIMIT 100000) SELECT i, printf('%0100d', i) FROM n"}`, session.ResultOK)
	if len(got) > maxResult+2048 || !strings.Contains(got, `"truncated":true`) || !strings.Contains(got, "more rows were left out") {
		t.Errorf("answer of %d bytes, ending %q", len(got), got[max(0, len(got)-200):])
	}
}
