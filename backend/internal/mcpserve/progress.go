package mcpserve

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// textEvery paces the notifications of streamed text: a model streams
// far more pieces than anyone reads in a status line.
const textEvery = 500 * time.Millisecond

// maxProgressText bounds the text a notification carries: the tail of
// the answer so far is what a status line shows.
const maxProgressText = 2000

// progress reports a run to the MCP client as progress notifications:
// tool activity at once, the text streamed so far every textEvery. It
// does nothing when the client gave no progress token.
type progress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any

	sent  float64
	turn  int32
	soFar strings.Builder
	dirty bool
	// names are the tools of the calls started, by call id.
	names map[string]string
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	return &progress{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken(), turn: -1, names: map[string]string{}}
}

// ticker paces flush; it never fires without a progress token.
func (p *progress) ticker() *time.Ticker {
	t := time.NewTicker(textEvery)
	if p.token == nil {
		t.Stop()
	}
	return t
}

// text adds streamed text; a new step's text starts over.
func (p *progress) text(turn int32, delta string) {
	if turn != p.turn {
		p.turn = turn
		p.soFar.Reset()
	}
	p.soFar.WriteString(delta)
	p.dirty = true
}

func (p *progress) toolStarted(call *agentsv1.ToolCall) {
	p.names[call.GetId()] = call.GetName()
	p.activity("calling " + call.GetName())
}

func (p *progress) toolProgressed(callID, message string) {
	p.activity(p.names[callID] + ": " + firstLine(message))
}

func (p *progress) toolCompleted(r *agentsv1.ToolResult) {
	if r.GetStatus() == agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
		return
	}
	status := strings.ToLower(strings.TrimPrefix(r.GetStatus().String(), "TOOL_RESULT_STATUS_"))
	p.activity(r.GetName() + " " + status + ": " + firstLine(r.GetText()))
}

// activity reports something the run did, after the text that came
// before it.
func (p *progress) activity(message string) {
	p.flush()
	p.notify(message)
}

// flush reports the text streamed since the last report.
func (p *progress) flush() {
	if !p.dirty {
		return
	}
	p.dirty = false
	p.notify(tail(p.soFar.String()))
}

func (p *progress) notify(message string) {
	if p.token == nil {
		return
	}
	// Progress only ever grows, as MCP requires; there is no total.
	p.sent++
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.sent, Message: message})
}

// tail is the end of text, at most maxProgressText bytes, cut at a
// character boundary.
func tail(text string) string {
	if len(text) <= maxProgressText {
		return text
	}
	i := len(text) - maxProgressText
	for i < len(text) && !utf8.RuneStart(text[i]) {
		i++
	}
	return "…" + text[i:]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
