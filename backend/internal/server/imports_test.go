package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// The conversations of the agentsexe package's tests, in agents-exe's
// own encoding.
const (
	convFile    = "../convfile/testdata/conv.1f7c2d9a-3b4e-4c5d-8e6f-7a8b9c0d1e2f.json"
	forkFile    = "../convfile/testdata/review.session.json"
	convID      = "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60"
	forkID      = "a3d5e7f9-1b2c-4d6e-8f01-23456789abcd"
	convTurns   = 6
	forkTurns   = 7 // six in the file, and the results of its unanswered call
	missingSlug = "gone-agent"
)

func importFile(t *testing.T, path string) *agentsv1.ImportFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &agentsv1.ImportFile{Name: filepath.Base(path), Content: b}
}

// Issue 23, item 5, on the server: ImportSessions over Connect stores each
// conversation whole under its own id with its fork link and its
// session.created event, reports a malformed file without stopping the
// others, leaves a second import unchanged (over the JSON route too),
// refuses another history under a taken id, and the sessions it made are
// read, exported, forked and continued like any other, their agent
// loaded or not.
func TestImportSessions(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{
			Rules: []fakellm.Rule{
				// The imported history reaches the model: three answers of
				// the conversation before this one.
				{Match: fakellm.Match{UserContains: "go on", AssistantMessages: new(3)}, Reply: fakellm.Reply{Text: "going on from the imported history"}},
			},
			Default: &fakellm.Reply{Text: "the history did not arrive"},
		}, withAgentsDir("testdata/docs"), on(d))
		feed := e.subscribe(&agentsv1.SubscribeRequest{})

		res, err := e.sessions.ImportSessions(ctxFor(t), connect.NewRequest(&agentsv1.ImportSessionsRequest{
			Agent: missingSlug,
			Files: []*agentsv1.ImportFile{
				importFile(t, convFile),
				{Name: "broken.session.json", Content: []byte(`{"sessionId": "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a99", "turns": [{"tag": "UserTurn"}]}`)},
				importFile(t, forkFile),
			},
		}))
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		got := res.Msg.GetResults()
		if len(got) != 3 {
			t.Fatalf("%d results, want one per file: %v", len(got), got)
		}
		if r := got[0]; r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || r.GetSessionId() != convID || r.GetTurnCount() != convTurns || r.GetName() != filepath.Base(convFile) {
			t.Errorf("conversation: %v", r)
		}
		if r := got[1]; r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_FAILED || r.GetName() != "broken.session.json" ||
			r.GetReason() != "turns[0].contents: missing (want an object)" || r.GetSessionId() != "" {
			t.Errorf("malformed file: %v", r)
		}
		if r := got[2]; r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || r.GetSessionId() != forkID || r.GetForkedFrom() != convID || r.GetTurnCount() != forkTurns {
			t.Errorf("fork: %v", r)
		}
		// Live clients see the sessions arrive, each whole.
		created := map[string]*agentsv1.SessionMeta{}
		for len(created) < 2 {
			if ev := feed.next(t); ev.GetKind() == "session.created" {
				created[ev.GetSessionId()] = ev.GetSessionCreated().GetMeta()
			}
		}
		if m := created[convID]; m.GetTurnCount() != convTurns || m.GetAgent() != missingSlug {
			t.Errorf("session.created of the conversation: %v", m)
		}
		if m := created[forkID]; m.GetForkedFrom() != convID {
			t.Errorf("session.created of the fork: %v", m)
		}

		// Read and exported, though its agent is not loaded here.
		s := e.get(convID)
		m := s.GetMeta()
		if m.GetAgent() != missingSlug || m.GetOwner() != "local" || m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY ||
			m.GetTitle() != "List the files and tell me what the README says." || len(s.GetTurns()) != convTurns ||
			m.GetUsage().GetPromptTokens() != 1353+1500+1700 || m.GetUsage().GetCachedTokens() != 1024+1280 {
			t.Errorf("imported session: %v", m)
		}
		if calls := s.GetTurns()[1].GetLlm().GetToolCalls(); len(calls) != 2 || calls[1].GetName() != "bash_read-file" {
			t.Errorf("imported calls: %v", calls)
		}
		if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 2 || r[0].GetText() != "README.md\nsrc/main.hs\n" {
			t.Errorf("imported results: %v", r)
		}
		if a := s.GetTurns()[4].GetUser().GetAttachments(); len(a) != 1 || a[0].GetName() != "dot.png" {
			t.Errorf("imported attachment: %v", a)
		}
		exported, err := e.sessions.ExportSession(ctxFor(t), connect.NewRequest(&agentsv1.ExportSessionRequest{SessionId: convID}))
		if err != nil || !strings.Contains(exported.Msg.GetContent(), "A single dot.") {
			t.Errorf("export: %v, %v", exported, err)
		}

		// Again, through the JSON route: nothing changes.
		body := `{"agent": "helper", "files": [{"name": "again.json", "content": "` + base64.StdEncoding.EncodeToString(importFile(t, convFile).GetContent()) + `"}]}`
		code, _, raw := e.do("POST", "/v1/sessions:import", body)
		again := &agentsv1.ImportSessionsResponse{}
		if code != http.StatusOK {
			t.Fatalf("POST /v1/sessions:import = %d %s", code, raw)
		}
		if err := apijson.Unmarshal(raw, again); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		if r := again.GetResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED || r[0].GetSessionId() != convID || r[0].GetName() != "again.json" {
			t.Errorf("second import: %s", raw)
		}
		if !strings.Contains(string(raw), `"status":"unchanged"`) {
			t.Errorf("the route's answer %s does not say unchanged in its words", raw)
		}
		if m := e.get(convID).GetMeta(); m.GetAgent() != missingSlug || m.GetTurnCount() != convTurns {
			t.Errorf("after the second import: %v", m)
		}

		// Another history under the same id is refused, the stored one kept.
		other := strings.ReplaceAll(string(importFile(t, convFile).GetContent()), "A single dot.", "Two dots.")
		res, err = e.sessions.ImportSessions(ctxFor(t), connect.NewRequest(&agentsv1.ImportSessionsRequest{
			Agent: "helper", Files: []*agentsv1.ImportFile{{Name: "edited.json", Content: []byte(other)}},
		}))
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Msg.GetResults()[0]; r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_FAILED || !strings.Contains(r.GetReason(), "another history: turn 5 differs") {
			t.Errorf("another history: %v", r)
		}

		// Continued with a loaded agent: a fork at the head bound to it,
		// then a message. The model gets the imported history.
		forked, err := e.sessions.ForkSession(ctxFor(t), connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: convID, Agent: "helper"}))
		if err != nil {
			t.Fatalf("fork: %v", err)
		}
		fid := forked.Msg.GetSession().GetMeta().GetId()
		posted, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: fid, Message: &agentsv1.Message{Text: "go on"}, Wait: true}))
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		turns := posted.Msg.GetSession().GetTurns()
		if len(turns) != 2 || turns[1].GetLlm().GetText() != "going on from the imported history" {
			t.Errorf("continued: %v", turns)
		}
		// The imported session itself runs with its own agent, which is
		// not loaded: its run fails saying so, as for any session whose
		// agent went away, and it takes input again.
		if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: convID, Message: &agentsv1.Message{Text: "go on"}})); err != nil {
			t.Fatalf("post: %v", err)
		}
		if m := e.wait(convID).GetMeta(); m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_FAILED || m.GetStatusReason() != `agent "gone-agent" is not loaded` {
			t.Errorf("run of a session whose agent is not loaded: %v", m)
		}
	})
}

// Requests that are wrong as a whole are refused before anything is
// imported.
func TestImportSessionsRefusesBadRequests(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir("testdata/docs"))
	for _, tc := range []struct{ body, want string }{
		{`{"files": [{"name": "a.json", "content": ""}]}`, "agent is required"},
		{`{"agent": "helper", "files": []}`, "files: at least one file is required"},
		{`{"agent": "helper", "files": [{"name": "a.json", "content": "not base64!"}]}`, "files[0].content"},
		// No agent can ever have this slug: the sessions could never run.
		{`{"agent": "no such/agent!", "files": [{"name": "a.json", "content": "` + base64.StdEncoding.EncodeToString(importFile(t, convFile).GetContent()) + `"}]}`, `agent: "no such/agent!"`},
	} {
		code, _, raw := e.do("POST", "/v1/sessions:import", tc.body)
		if _, _, msg := jsonError(t, raw); code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s = %d %s, want 400 saying %q", tc.body, code, raw, tc.want)
		}
	}
	if n := e.countSessions(); n != 0 {
		t.Errorf("%d sessions after refused imports", n)
	}
}

// Imports of one file at once settle as one imported and the others
// unchanged: the session is stored once, whole.
func TestConcurrentImportsOfOneSession(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir("testdata/docs"))
	const n = 4
	statuses := make([]agentsv1.ImportStatus, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := e.sessions.ImportSessions(ctxFor(t), connect.NewRequest(&agentsv1.ImportSessionsRequest{
				Agent: "helper", Files: []*agentsv1.ImportFile{importFile(t, convFile)},
			}))
			if err != nil {
				t.Errorf("import %d: %v", i, err)
				return
			}
			statuses[i] = res.Msg.GetResults()[0].GetStatus()
			if r := res.Msg.GetResults()[0].GetReason(); r != "" {
				t.Errorf("import %d: %s", i, r)
			}
		})
	}
	wg.Wait()
	count := map[agentsv1.ImportStatus]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED] != 1 || count[agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED] != n-1 {
		t.Errorf("statuses %v, want one imported and the others unchanged", statuses)
	}
	if s := e.get(convID); len(s.GetTurns()) != convTurns {
		t.Errorf("%d turns stored, want %d", len(s.GetTurns()), convTurns)
	}
}

// withoutNewestTurns is an agents-exe file with its n newest turns left
// out (agents-exe lists them newest first): the file as it was before
// the conversation went on.
func withoutNewestTurns(t *testing.T, content []byte, n int) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(content, &doc); err != nil {
		t.Fatal(err)
	}
	doc["turns"] = doc["turns"].([]any)[n:]
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// importAs imports files as the owner of token and returns the results.
func (e *env) importAs(token string, files ...*agentsv1.ImportFile) []*agentsv1.ImportResult {
	e.t.Helper()
	res, err := e.clientAs(token).ImportSessions(ctxFor(e.t), connect.NewRequest(&agentsv1.ImportSessionsRequest{Agent: "helper", Files: files}))
	if err != nil {
		e.t.Fatalf("import: %v", err)
	}
	return res.Msg.GetResults()
}

// Issue 33, item 14: a file whose session id another owner holds is
// imported as if the id were free, under an id minted for the importer
// (the same one each time, so importing it again changes nothing), and
// the answer says so without telling whose the id is; the other owner's
// session is untouched.
func TestImportingAnIDAnotherOwnerHoldsMintsOne(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir("testdata/docs"), withSecurity(server.Security{Tokens: testTokens(t)}))
	if r := e.importAs(aliceToken, importFile(t, convFile))[0]; r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || r.GetSessionId() != convID {
		t.Fatalf("alice's import: %v", r)
	}
	r := e.importAs(bobToken, importFile(t, convFile))[0]
	minted := r.GetSessionId()
	if r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || minted == convID || minted == "" || r.GetTurnCount() != convTurns ||
		!strings.Contains(r.GetReason(), "imported as a new session") || strings.Contains(r.GetReason(), "alice") || strings.Contains(r.GetReason(), "exists") {
		t.Fatalf("bob's import of alice's id: %v", r)
	}
	got, err := e.clientAs(bobToken).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: minted}))
	if err != nil || got.Msg.GetSession().GetMeta().GetOwner() != "bob" || len(got.Msg.GetSession().GetTurns()) != convTurns {
		t.Fatalf("bob's session %s: %v, %v", minted, got, err)
	}
	if again := e.importAs(bobToken, importFile(t, convFile))[0]; again.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED || again.GetSessionId() != minted {
		t.Errorf("bob's second import: %v, want unchanged as %s", again, minted)
	}
	alices, err := e.clientAs(aliceToken).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: convID}))
	if err != nil || alices.Msg.GetSession().GetMeta().GetOwner() != "alice" || len(alices.Msg.GetSession().GetTurns()) != convTurns {
		t.Errorf("alice's session after bob's imports: %v, %v", alices, err)
	}
}

// Issue 33, item 14: a file that grew by two turns since it was imported
// adds them to the session; importing it again changes nothing; a file
// whose history differs from the session's is refused, saying at which
// turn.
func TestReimportingAGrownFileAddsItsTurns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir("testdata/docs"), on(d))
		full := importFile(t, convFile)
		older := &agentsv1.ImportFile{Name: "older.json", Content: withoutNewestTurns(t, full.GetContent(), 2)}
		importing := func(f *agentsv1.ImportFile) *agentsv1.ImportResult {
			t.Helper()
			res, err := e.sessions.ImportSessions(ctxFor(t), connect.NewRequest(&agentsv1.ImportSessionsRequest{Agent: "helper", Files: []*agentsv1.ImportFile{f}}))
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			return res.Msg.GetResults()[0]
		}
		if r := importing(older); r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || r.GetTurnCount() != convTurns-2 {
			t.Fatalf("the older file: %v", r)
		}
		if r := importing(full); r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED || r.GetSessionId() != convID || !strings.Contains(r.GetReason(), "added 2 turns") {
			t.Fatalf("the grown file: %v, want imported, saying 2 turns were added", r)
		}
		s := e.get(convID)
		if n := len(s.GetTurns()); n != convTurns || s.GetMeta().GetTurnCount() != convTurns || s.GetTurns()[5].GetLlm().GetText() != "A single dot." ||
			s.GetMeta().GetUsage().GetPromptTokens() != 1353+1500+1700 {
			t.Errorf("after the grown file: %d turns, %v", n, s.GetMeta())
		}
		if r := importing(full); r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED {
			t.Errorf("the grown file again: %v, want unchanged", r)
		}
		other := strings.ReplaceAll(string(full.GetContent()), "A single dot.", "Two dots.")
		r := importing(&agentsv1.ImportFile{Name: "edited.json", Content: []byte(other)})
		if r.GetStatus() != agentsv1.ImportStatus_IMPORT_STATUS_FAILED || !strings.Contains(r.GetReason(), "turn 5 differs") {
			t.Errorf("another history: %v, want failed at turn 5", r)
		}
		if n := len(e.get(convID).GetTurns()); n != convTurns {
			t.Errorf("%d turns after a refused import, want %d", n, convTurns)
		}
	})
}
