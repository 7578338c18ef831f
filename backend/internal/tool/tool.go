// Package tool is the seam between the runner and the things a model may
// call. Every tool, whatever runs it (a bash script, a helper agent, the
// operating system, an MCP server, a client), is a Tool: it describes
// itself, says where its calls run, and executes a call with progress.
// The runner knows no kind; it decides per call whether the call runs now
// or waits for a client, then calls Execute.
//
// A call's arguments are decoded once, strictly, against the tool's
// schema (DecodeArgs): the runner's approval policies judge that decoded
// value, and Execute gets the same value in Call.Args. No tool reads the
// model's text itself, so no tool can read it differently.
package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// Tool is anything an agent's model may call.
type Tool interface {
	// Spec describes the tool as offered to the model and to clients.
	Spec() Spec
	// Mode says where calls run: attached (Execute, inside the step) or
	// deferred (a client answers them; Execute is never called).
	Mode() session.CallMode
	// Execute runs one call to its result. Every failure the model should
	// read is a Result with an error status; a cancelled ctx ends the call.
	// It may be called concurrently.
	Execute(ctx context.Context, call Call) Result
}

// Resumable is a tool whose calls outlive the server process: a call in
// flight when the server stopped is taken up again at the next start
// instead of ending with an aborted result.
type Resumable interface {
	Tool
	// Rejoin returns the handle of the work the call started (a helper's
	// child session), or "" when there is none to take up.
	Rejoin(ctx context.Context, host Host, callID string) (string, error)
}

// Spec is a tool's description.
type Spec struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments object.
	Parameters json.RawMessage
	Kind       session.ToolKind
	// Source is where the tool comes from: a script path, a helper slug,
	// an MCP server, "system" or "client".
	Source string
}

// Call is one call of a tool, as the model asked for it, with what the
// tool may know about the calling session.
type Call struct {
	ID   string
	Name string
	// Args are the call's arguments, decoded and checked against the
	// tool's schema by DecodeArgs.
	Args    Args
	Session Session
	// Progress takes a line saying how the call goes; it never blocks and
	// becomes a tool.progressed event (rate limited by the runner).
	Progress func(line string)
	// Host is the operating system as the calling session sees it.
	Host Host
	// Resume is the handle Rejoin returned, when the call is taken up
	// again after a restart.
	Resume string
}

// Session is the calling session.
type Session struct {
	ID    string
	Owner string
	Agent string
	// Depth is how deep the session is among helper sessions (0: a root).
	Depth int
	// Params are the session's params (secrets included): a copy the tool
	// may keep for the call.
	Params map[string]string
}

// Result is how a call ended.
type Result struct {
	Text   string
	Status session.ResultStatus
	// ChildSessionID is the session that answered a helper call.
	ChildSessionID string
	// Suspended says the call did not end: the server is stopping, or the
	// work the call started waits for a client (a helper's child waits
	// for an approval, say), and the call is taken up again when that
	// work can go on (see Resumable). Status is meaningless then; for
	// work that waits, ChildSessionID names the session that waits and
	// Text says what for.
	Suspended bool
}

// OK is a successful result.
func OK(text string) Result { return Result{Text: text, Status: session.ResultOK} }

// Failed is an error result the model reads.
func Failed(text string) Result { return Result{Text: text, Status: session.ResultError} }

// Host is what the operating system offers a calling session: the kernel
// operations tools need, acting as that session within its owner. A
// session of another owner is, to a host, a session that does not exist.
type Host interface {
	// Helper runs the helper agent as a child session and returns its
	// final answer, reporting the child's steps as the call's progress;
	// with call.Resume set it waits for that child again instead.
	Helper(ctx context.Context, call Call, run HelperRun) Result
	// HelperChild returns the child session a helper call started, or "".
	HelperChild(ctx context.Context, callID string) (string, error)
	// SendMail delivers a message to another session of the owner and
	// returns the mail's id.
	SendMail(ctx context.Context, to, text string, urgent bool) (string, error)
	// Spawn starts a session of any agent as a child of the calling
	// session, with a first message; with wait it returns once the
	// child's run stopped.
	Spawn(ctx context.Context, req SpawnRequest) (Spawned, error)
	// SubSessions lists the sessions the calling session started.
	SubSessions(ctx context.Context) ([]SubSession, error)
	// Watch watches a session for ttl (a default when zero) and returns
	// when the watch ends.
	Watch(ctx context.Context, target string, ttl time.Duration) (time.Time, error)
	// ReadSession returns a session of the owner with its last turns.
	ReadSession(ctx context.Context, id string, lastTurns int) (session.Meta, []session.Turn, error)
}

// HelperRun is one run of a helper agent.
type HelperRun struct {
	Agent  string
	Prompt string
	// Narrowing is what a narrowed helper tool gives the child; nil for
	// a helper offered as it is.
	Narrowing *session.Narrowing
}

// SpawnRequest starts a child session of another agent.
type SpawnRequest struct {
	Agent, Prompt, Title string
	Wait                 bool
}

// Spawned is a session Spawn started.
type Spawned struct {
	ID string
	// Status is the child's status, and Reason why its run stopped,
	// once its run stopped when waited for.
	Status, Reason string
	// Answer is the child's final text, when it was waited for and
	// answered.
	Answer string
}

// SubSession is one session a session started.
type SubSession struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Status string `json:"status"`
	Title  string `json:"title"`
}
