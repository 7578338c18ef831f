package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func testCreateAndGet(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	m := session.Meta{
		ID:           "s1",
		Agent:        "coder",
		Owner:        "alice",
		Title:        "Fix the parser",
		Status:       session.StatusFailed,
		StatusReason: "model unavailable",
		ParentID:     "p0",
		ForkedFrom:   "f0",
		Usage:        session.Usage{Prompt: 1 << 40, Completion: 2, Cached: 3, Reasoning: 4},
		Depth:        2,
		Created:      at(0),
		// Another zone: the store keeps the instant and answers in UTC.
		Updated: at(time.Hour).In(time.FixedZone("X", 5*3600)),
	}
	// A child needs its parent to exist.
	wantErr(t, s.CreateSession(ctx, m, nil), errs.KindNotFound, errs.CodeUnknownSession)
	mustCreate(t, s, newMeta("p0", "alice", at(0)))
	noErr(t, s.CreateSession(ctx, m, nil), "create")

	want := m
	want.Updated = m.Updated.UTC()
	want.RootID = "p0" // a child is in its parent's tree
	equal(t, "meta", mustGet(t, s, "s1"), want)

	got, turns, err := s.LoadSession(ctx, "s1")
	noErr(t, err, "load")
	equal(t, "loaded meta", got, want)
	if len(turns) != 0 {
		t.Fatalf("got %d turns, want none", len(turns))
	}
}

func testCreateWithTurns(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	delivered := at(2 * time.Second)
	turns := []session.Turn{
		{Index: 0, Created: at(0), User: &session.UserTurn{
			Text:        "look at this",
			Attachments: []session.Attachment{{Name: "a.png", MediaType: "image/png", Data: []byte{0, 1, 2, 255}}},
		}},
		{Index: 1, Created: at(time.Second), LLM: &session.LLMTurn{
			Text:         "calling tools",
			Thinking:     "hmm",
			ToolCalls:    []session.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"cmd":"ls"}`, Kind: session.ToolBash, Mode: session.CallAttached}},
			Usage:        session.Usage{Prompt: 10, Completion: 5, Cached: 2, Reasoning: 1},
			Model:        "m1",
			FinishReason: "tool_calls",
		}},
		{Index: 2, Created: at(2 * time.Second), User: &session.UserTurn{
			ToolResults: []session.ToolResult{{CallID: "c1", Name: "bash", Text: "a\x00b", Status: session.ResultOK, Duration: 1500 * time.Millisecond}},
			Mail:        []session.Mail{{ID: "m1", SessionID: "src", Sender: session.Sender{Kind: session.SenderSession, Name: "other"}, Priority: session.PriorityUrgent, Body: session.MailBody{Kind: session.MailAgentMessage, Text: "hi", Agent: "helper"}, Created: at(0), Delivered: &delivered}},
		}},
	}
	m := newMeta("fork", "alice", at(0))
	m.ForkedFrom = "src"
	m.TurnCount = len(turns)
	noErr(t, s.CreateSession(ctx, m, turns), "create")

	got, gotTurns, err := s.LoadSession(ctx, "fork")
	noErr(t, err, "load")
	equal(t, "meta", got, m)
	equal(t, "turns", gotTurns, turns)

	// A range of them, as a reader that has the metadata reads only the
	// turns it shows.
	part, err := s.LoadTurns(ctx, "fork", 1, 3)
	noErr(t, err, "load turns 1 to 3")
	equal(t, "turns 1 to 3", part, turns[1:])
	part, err = s.LoadTurns(ctx, "fork", 2, 2)
	noErr(t, err, "load no turns")
	if len(part) != 0 {
		t.Fatalf("turns 2 to 2: got %d, want none", len(part))
	}
	_, err = s.LoadTurns(ctx, "fork", 2, 4)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	_, err = s.LoadTurns(ctx, "nobody", 0, 1)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
}

func testCreateRejects(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("taken", "alice", at(0)))

	both := userTurn(0, "x")
	both.LLM = &session.LLMTurn{Text: "y"}
	tests := []struct {
		name  string
		meta  session.Meta
		turns []session.Turn
		kind  errs.Kind
		code  string
	}{
		{"duplicate id", newMeta("taken", "bob", at(time.Second)), nil, errs.KindConflict, errs.CodeAlreadyExists},
		{"count mismatch", func() session.Meta { m := newMeta("n1", "a", at(0)); m.TurnCount = 2; return m }(),
			[]session.Turn{userTurn(0, "x")}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"gap", func() session.Meta { m := newMeta("n2", "a", at(0)); m.TurnCount = 2; return m }(),
			[]session.Turn{userTurn(0, "x"), llmTurn(2, "y")}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"not from zero", func() session.Meta { m := newMeta("n3", "a", at(0)); m.TurnCount = 1; return m }(),
			[]session.Turn{userTurn(1, "x")}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"both sides", func() session.Meta { m := newMeta("n4", "a", at(0)); m.TurnCount = 1; return m }(),
			[]session.Turn{both}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"no side", func() session.Meta { m := newMeta("n5", "a", at(0)); m.TurnCount = 1; return m }(),
			[]session.Turn{{Index: 0}}, errs.KindInvalid, errs.CodeInvalidTurns},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, s.CreateSession(ctx, tc.meta, tc.turns), tc.kind, tc.code)
		})
	}
	// Nothing of the rejected sessions was written, and the taken one is
	// untouched.
	all, _, err := s.ListSessions(ctx, store.ListFilter{})
	noErr(t, err, "list")
	equal(t, "sessions", ids(all), []string{"taken"})
	equal(t, "owner", all[0].Owner, "alice")
}

func testUnknownSession(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	_, err := s.GetMeta(ctx, "nope")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	_, _, err = s.LoadSession(ctx, "nope")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	wantErr(t, s.UpdateMeta(ctx, newMeta("nope", "a", at(0))), errs.KindNotFound, errs.CodeUnknownSession)
}

func testUpdateMeta(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("p", "alice", at(0)))
	orig := newMeta("s1", "alice", at(0))
	orig.ParentID = "p"
	orig.Depth = 1
	mustCreate(t, s, orig, userTurn(0, "a"), llmTurn(1, "b"))
	mustAddMail(t, s, newMail("m1", "s1", at(0)))

	upd := mustGet(t, s, "s1")
	upd.Agent = "writer"
	upd.Title = "renamed"
	upd.Status = session.StatusFailed
	upd.StatusReason = "boom"
	upd.Usage = session.Usage{Prompt: 7, Completion: 8, Cached: 9, Reasoning: 10}
	upd.Updated = at(time.Hour)
	upd.AllowedTools = []string{"bash_run", "mcp_fs_write"}
	want := upd

	// The rest is not UpdateMeta's to change.
	upd.Owner = "mallory"
	upd.ParentID = "other"
	upd.ForkedFrom = "other"
	upd.Depth = 9
	upd.Created = at(-time.Hour)
	upd.TurnCount = 40
	upd.PendingMail = 40
	upd.PendingCalls = 40
	noErr(t, s.UpdateMeta(ctx, upd), "update")
	equal(t, "meta", mustGet(t, s, "s1"), want)
	if want.TurnCount != 2 || want.PendingMail != 1 {
		t.Fatalf("want turn count 2 and 1 pending mail, got %+v", want)
	}
}

// listFixture creates sessions for the filter tests, oldest first.
func listFixture(t *testing.T, s store.Store) {
	t.Helper()
	for i, m := range []struct {
		id, owner, agent, parent, title string
		status                          session.Status
	}{
		{"a", "alice", "coder", "", "Fix the Parser", session.StatusReady},
		{"b", "alice", "writer", "", "100% done_ish", session.StatusRunning},
		{"c", "bob", "coder", "", "parser notes 2020", session.StatusFailed},
		{"d", "alice", "coder", "a", "child of a", session.StatusReady},
		{"e", "bob", "coder", "c", "child of c", session.StatusWaiting},
	} {
		meta := newMeta(m.id, m.owner, at(time.Duration(i)*time.Second))
		meta.Agent, meta.ParentID, meta.Title, meta.Status = m.agent, m.parent, m.title, m.status
		mustCreate(t, s, meta)
	}
}

func testListFilters(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	listFixture(t, s)
	tests := []struct {
		name   string
		filter store.ListFilter
		want   []string
	}{
		{"all", store.ListFilter{}, []string{"e", "d", "c", "b", "a"}},
		{"owner", store.ListFilter{Owner: "alice"}, []string{"d", "b", "a"}},
		{"unknown owner", store.ListFilter{Owner: "carol"}, []string{}},
		{"agent", store.ListFilter{Agent: "coder"}, []string{"e", "d", "c", "a"}},
		{"status", store.ListFilter{Status: session.StatusReady}, []string{"d", "a"}},
		{"parent", store.ListFilter{ParentID: "a"}, []string{"d"}},
		{"roots", store.ListFilter{RootsOnly: true}, []string{"c", "b", "a"}},
		{"query ignores case", store.ListFilter{Query: "PARSER"}, []string{"c", "a"}},
		{"query percent is literal", store.ListFilter{Query: "0%"}, []string{"b"}},
		{"query underscore is literal", store.ListFilter{Query: "x_t"}, []string{}},
		{"query underscore matches itself", store.ListFilter{Query: "e_i"}, []string{"b"}},
		{"combined", store.ListFilter{Owner: "alice", Agent: "coder", RootsOnly: true}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := s.ListSessions(context.Background(), tc.filter)
			noErr(t, err, "list")
			equal(t, "ids", ids(got), tc.want)
			equal(t, "next token", next, "")
		})
	}

	// A query is bounded, so no pattern grows past what the database
	// takes; at the bound, even all wildcards, it is a plain listing.
	_, _, err := s.ListSessions(context.Background(), store.ListFilter{Query: strings.Repeat("x", store.MaxQueryLength+1)})
	wantErr(t, err, errs.KindInvalid, errs.CodeInvalidArgument)
	got, _, err := s.ListSessions(context.Background(), store.ListFilter{Query: strings.Repeat("%", store.MaxQueryLength)})
	noErr(t, err, "list with the longest query")
	equal(t, "ids", ids(got), []string{})
}

// tieFixture creates sessions whose created times tie in groups, with ids
// that do not follow creation order, and returns their ids in listing
// order: created descending, then id descending.
func tieFixture(t *testing.T, s store.Store) []string {
	t.Helper()
	type row struct {
		id      string
		created time.Time
	}
	rows := []row{
		{"k", at(1)}, {"c", at(1)}, {"x", at(1)},
		{"b", at(2)}, {"y", at(2)},
		{"m", at(3)},
		{"a", at(4)}, {"z", at(4)},
		{"q", at(5)},
	}
	for i, r := range rows {
		owner := "alice"
		if i%3 == 0 {
			owner = "bob"
		}
		mustCreate(t, s, newMeta(r.id, owner, r.created))
	}
	slices.SortFunc(rows, func(p, q row) int {
		if c := q.created.Compare(p.created); c != 0 {
			return c
		}
		return strings.Compare(q.id, p.id)
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.id
	}
	return out
}

// walk lists every page of f and checks the shape of each.
func walk(t *testing.T, s store.Store, f store.ListFilter) []string {
	t.Helper()
	var all []string
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("pagination does not end")
		}
		got, next, err := s.ListSessions(context.Background(), f)
		noErr(t, err, "list page %d", pages)
		if len(got) == 0 || len(got) > f.PageSize {
			t.Fatalf("page %d has %d sessions, want 1..%d", pages, len(got), f.PageSize)
		}
		if next != "" && len(got) != f.PageSize {
			t.Fatalf("page %d is short (%d) but has a next token", pages, len(got))
		}
		all = append(all, ids(got)...)
		if next == "" {
			return all
		}
		f.PageToken = next
	}
}

func testPagination(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	want := tieFixture(t, s)
	for _, size := range []int{1, 2, 3, 4, 8, 9, 10} {
		got := walk(t, s, store.ListFilter{PageSize: size})
		equal(t, "all pages", got, want)
	}

	var bobs []string
	for _, id := range want {
		if mustGet(t, s, id).Owner == "bob" {
			bobs = append(bobs, id)
		}
	}
	equal(t, "filtered pages", walk(t, s, store.ListFilter{Owner: "bob", PageSize: 2}), bobs)
	// A filter with no index in listing order makes the database sort, so
	// ties are not broken by an index's order by accident.
	equal(t, "sorted pages", walk(t, s, store.ListFilter{Status: session.StatusReady, PageSize: 2}), want)

	// No page size means the default, which holds all of these.
	got, next, err := s.ListSessions(context.Background(), store.ListFilter{})
	noErr(t, err, "list")
	equal(t, "default page", ids(got), want)
	equal(t, "default next", next, "")
}

func testPaginationWithInserts(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	want := tieFixture(t, s)
	first, next, err := s.ListSessions(ctx, store.ListFilter{PageSize: 4})
	noErr(t, err, "first page")
	equal(t, "first page", ids(first), want[:4])

	// A session created between pages (newer than all) must neither show
	// up in later pages nor shift them.
	mustCreate(t, s, newMeta("new", "alice", at(time.Hour)))
	rest := walk(t, s, store.ListFilter{PageSize: 4, PageToken: next})
	equal(t, "later pages", rest, want[4:])
}

func testMalformedPageToken(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	for _, token := range []string{
		"!!!",
		"bm9jb2xvbg",   // "nocolon"
		"YWJjOmlk",     // "abc:id"
		"MTI6",         // "12:"
		"MTI6aWQ=====", // padding is not part of the format
	} {
		_, _, err := s.ListSessions(context.Background(), store.ListFilter{PageToken: token})
		wantErr(t, err, errs.KindInvalid, errs.CodeInvalidPageToken)
	}
}

func testListByStatusAndChildren(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	listFixture(t, s)

	got, err := s.ListByStatus(ctx, session.StatusRunning, session.StatusWaiting)
	noErr(t, err, "by status")
	equal(t, "running or waiting", ids(got), []string{"b", "e"})
	got, err = s.ListByStatus(ctx)
	noErr(t, err, "no status")
	equal(t, "no status", ids(got), []string{})

	counts, err := s.CountByStatus(ctx)
	noErr(t, err, "count by status")
	equal(t, "counts by status", counts, map[session.Status]int{
		session.StatusReady: 2, session.StatusRunning: 1, session.StatusFailed: 1, session.StatusWaiting: 1,
	})

	child := newMeta("a2", "alice", at(time.Hour))
	child.ParentID = "a"
	mustCreate(t, s, child)
	got, err = s.Children(ctx, "a")
	noErr(t, err, "children")
	equal(t, "children, oldest first", ids(got), []string{"d", "a2"})
	got, err = s.Children(ctx, "b")
	noErr(t, err, "no children")
	equal(t, "no children", ids(got), []string{})
}

func testDeleteCascades(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("a", "alice", at(0)), userTurn(0, "q"))
	child := newMeta("b", "alice", at(time.Second))
	child.ParentID = "a"
	mustCreate(t, s, child)
	mustCreate(t, s, newMeta("c", "alice", at(2*time.Second)))
	mustAddMail(t, s, newMail("ma", "a", at(0)), newMail("mb", "b", at(0)))
	meta := mustGet(t, s, "a")
	meta.TurnCount = 2
	noErr(t, s.CommitStep(ctx, store.StepCommit{
		Meta:        meta,
		NewTurns:    []session.Turn{llmTurn(1, "r")},
		NewDeferred: []session.DeferredCall{newDeferred("ta", "a", 1)},
	}), "commit")
	for _, w := range []session.Watch{
		{WatcherID: "a", TargetID: "b", Expires: at(time.Hour)},
		{WatcherID: "b", TargetID: "a", Expires: at(time.Hour)},
		{WatcherID: "b", TargetID: "c", Expires: at(time.Hour)},
	} {
		noErr(t, s.PutWatch(ctx, w), "watch")
	}
	_, err := s.AcquireLease(ctx, "a", "h1", at(0), time.Hour)
	noErr(t, err, "lease")

	n, err := s.DeleteSessions(ctx, "a", "ghost")
	noErr(t, err, "delete")
	equal(t, "deleted", n, 1)

	_, _, err = s.LoadSession(ctx, "a")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	_, err = s.GetDeferred(ctx, "ta")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownToken)
	mail, err := s.ListMail(ctx, "a", false)
	noErr(t, err, "mail of a")
	equal(t, "mail of a", mailIDs(mail), []string{})
	watches, err := s.ListWatches(ctx)
	noErr(t, err, "watches")
	equal(t, "watches", watches, []session.Watch{{WatcherID: "b", TargetID: "c", Expires: at(time.Hour)}})
	// The lease went too: recreating the session finds it free.
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	_, err = s.AcquireLease(ctx, "a", "h2", at(0), time.Hour)
	noErr(t, err, "lease after delete")

	// The child is not deleted with its parent, and keeps its own mail.
	equal(t, "child's parent", mustGet(t, s, "b").ParentID, "a")
	mail, err = s.ListMail(ctx, "b", false)
	noErr(t, err, "mail of b")
	equal(t, "mail of b", mailIDs(mail), []string{"mb"})

	n, err = s.DeleteSessions(ctx, "b", "c")
	noErr(t, err, "delete rest")
	equal(t, "deleted", n, 2)
	n, err = s.DeleteSessions(ctx)
	noErr(t, err, "delete nothing")
	equal(t, "deleted", n, 0)
}
