// Package storetest is the behaviour every store.Store implementation must
// have, as a test suite. Each dialect's tests run it, giving it a way to
// make fresh databases:
//
//	storetest.Run(t, func(t *testing.T) storetest.Opener { … })
//
// SQLite makes a file in t.TempDir(); PostgreSQL a database on the test
// server (pgtest.DSN), dropped when the test ends.
package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Opener opens a Store over one database, failing t if it cannot. Calling
// it again after the previous Store is closed must reopen the same
// database: that is how the suite checks durability across restarts. The
// suite closes every Store it opens.
type Opener func(t *testing.T) store.Store

// testStatements: every statement the store prepares compiles against
// its schema, those it prepares on first use included.
func testStatements(t *testing.T, fresh func(t *testing.T) Opener) {
	s := fresh(t)(t)
	defer s.Close()
	checker, ok := s.(interface{ CheckStatements(context.Context) error })
	if !ok {
		t.Skip("the store prepares nothing on first use")
	}
	if err := checker.CheckStatements(context.Background()); err != nil {
		t.Error(err)
	}
}

// Run runs the suite. fresh returns an Opener over a new, empty database;
// every test (and subtest) opens its own, so they run in parallel.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, fresh func(t *testing.T) Opener)
	}{
		{"Statements", testStatements},
		{"CreateAndGet", testCreateAndGet},
		{"CreateWithTurns", testCreateWithTurns},
		{"CreateRejects", testCreateRejects},
		{"UnknownSession", testUnknownSession},
		{"UpdateMeta", testUpdateMeta},
		{"ListFilters", testListFilters},
		{"Pagination", testPagination},
		{"PaginationWithInserts", testPaginationWithInserts},
		{"MalformedPageToken", testMalformedPageToken},
		{"ListByStatusAndChildren", testListByStatusAndChildren},
		{"DeleteCascades", testDeleteCascades},
		{"CommitStep", testCommitStep},
		{"CommitStepAtomic", testCommitStepAtomic},
		{"CommitStepSingleWriter", testCommitStepSingleWriter},
		{"Mail", testMail},
		{"MailRejects", testMailRejects},
		{"MarkDelivered", testMarkDelivered},
		{"MarkDeliveredRace", testMarkDeliveredRace},
		{"Deferred", testDeferred},
		{"CompleteDeferredRace", testCompleteDeferredRace},
		{"Watches", testWatches},
		{"Leases", testLeases},
		{"ExpireLeases", testExpireLeases},
		{"Fences", testFences},
		{"FencedSteps", testFencedSteps},
		{"Orphans", testOrphans},
		{"Commands", testCommands},
		{"Reopen", testReopen},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Canceled", testCanceled},
		{"EventLog", testEventLog},
		{"CommitChange", testCommitChange},
		{"PruneEvents", testPruneEvents},
		{"CommitAll", testCommitAll},
		{"CommitAllEvents", testCommitAllEvents},
		{"CommitKeepsChildrenWithTheirParent", testCommitKeepsChildrenWithTheirParent},
		{"StoredAgents", testStoredAgents},
		{"StoredAgentRaces", testStoredAgentRaces},
		{"StoredAgentsReopen", testStoredAgentsReopen},
		{"StoredAgentChangesAndTheirEvents", testStoredAgentChangesAndTheirEvents},
		{"Budgets", testBudgets},
		{"BudgetSetAfterCallsUnderNone", testBudgetSetAfterCallsUnderNone},
		{"TreeBudgetAndAutoResume", testTreeBudgetAndAutoResume},
		{"ReserveRace", testReserveRace},
		{"ReserveGrants", testReserveGrants},
		{"Webhooks", testWebhooks},
		{"WebhookOutbox", testWebhookOutbox},
		{"WebhookLastDelivery", testWebhookLastDelivery},
		{"WebhookLastAttempt", testWebhookLastAttempt},
		{"WebhookClaimRace", testWebhookClaimRace},
		{"AbandonedDeliveries", testAbandonedDeliveries},
		{"PruneKeepsUnfannedEvents", testPruneKeepsUnfannedEvents},
		{"Schedules", testSchedules},
		{"FiringsClaimOnce", testFiringsClaimOnce},
		{"SchedulesWithTheirLastFiring", testSchedulesWithTheirLastFiring},
		{"SchedulesGoWithTheirSession", testSchedulesGoWithTheirSession},
		{"SchedulesGoWithDeletedSessions", testSchedulesGoWithDeletedSessions},
		{"UsageSeries", testUsageSeries},
		{"UsageFold", testUsageFold},
		{"UsageFoldRace", testUsageFoldRace},
		{"SpendOfAGroup", testSpendOfAGroup},
		{"RunOutcomes", testRunOutcomes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, fresh)
		})
	}
}

// open opens a store that is closed when the test ends.
func open(t *testing.T, o Opener) store.Store {
	t.Helper()
	s := o(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// at is a fixed instant plus d, with nanoseconds so that truncation shows.
func at(d time.Duration) time.Time {
	return time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC).Add(d)
}

func newMeta(id, owner string, created time.Time) session.Meta {
	return session.Meta{
		ID:      id,
		Agent:   "coder",
		Owner:   owner,
		Title:   "session " + id,
		Status:  session.StatusReady,
		Created: created,
		Updated: created,
	}
}

func userTurn(i int, text string) session.Turn {
	return session.Turn{Index: i, Created: at(time.Duration(i) * time.Second), User: &session.UserTurn{Text: text}}
}

func llmTurn(i int, text string) session.Turn {
	return session.Turn{Index: i, Created: at(time.Duration(i) * time.Second), LLM: &session.LLMTurn{
		Text:  text,
		Usage: session.Usage{Prompt: 100, Completion: 20},
		Model: "m1",
	}}
}

func mustCreate(t *testing.T, s store.Store, m session.Meta, turns ...session.Turn) {
	t.Helper()
	m.TurnCount = len(turns)
	if err := s.CreateSession(context.Background(), m, turns); err != nil {
		t.Fatalf("create %s: %v", m.ID, err)
	}
}

func mustGet(t *testing.T, s store.Store, id string) session.Meta {
	t.Helper()
	m, err := s.GetMeta(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return m
}

func newMail(id, sessionID string, created time.Time) session.Mail {
	return session.Mail{
		ID:        id,
		SessionID: sessionID,
		Sender:    session.Sender{Kind: session.SenderUser, Name: "alice"},
		Priority:  session.PriorityNormal,
		Body:      session.MailBody{Kind: session.MailUserMessage, Text: "hello " + id},
		Created:   created,
	}
}

func mustAddMail(t *testing.T, s store.Store, ms ...session.Mail) {
	t.Helper()
	for _, m := range ms {
		if err := s.AddMail(context.Background(), m); err != nil {
			t.Fatalf("add mail %s: %v", m.ID, err)
		}
	}
}

func newDeferred(token, sessionID string, round int) session.DeferredCall {
	return session.DeferredCall{
		Token:     token,
		SessionID: sessionID,
		Round:     round,
		Call: session.ToolCall{ID: "call-" + token, Name: "approve", Arguments: `{"x":1}`,
			Kind: session.ToolClient, Mode: session.CallDeferred},
		Reason:  "client tool",
		Created: at(time.Minute),
	}
}

// wantErr fails t unless err has the kind and machine code.
func wantErr(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want kind %d code %q", kind, code)
	}
	if errs.KindOf(err) != kind || errs.CodeOf(err) != code {
		t.Fatalf("got error %v (kind %d, code %q), want kind %d code %q",
			err, errs.KindOf(err), errs.CodeOf(err), kind, code)
	}
}

func noErr(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

func ids(ms []session.Meta) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func mailIDs(ms []session.Mail) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func tokens(cs []session.DeferredCall) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Token)
	}
	return out
}
