package transcript

import (
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// call is what is known of one tool call: the model asks for it in an LLM
// turn, its result comes back in the next user turn (or, while the round
// runs, from live events). The call is drawn with its result, in the LLM
// turn that asked for it.
type call struct {
	call     *agentsv1.ToolCall
	result   *agentsv1.ToolResult
	running  bool
	progress string // the last progress line of the running call
	// child and agent name the helper session that runs a helper call.
	child, agent string
	childFailed  string
	// deferred is why the call waits for a client, while it does.
	deferred string
	// owner is the index of the LLM turn that asked for the call, -1 while
	// that turn is unknown.
	owner int
}

// status is how a call stands, for its line.
type status int

const (
	statusPending status = iota
	statusRunning
	statusWaiting
	statusOK
	statusError
	statusCancelled
	statusAborted
)

func (c *call) status() status {
	if r := c.result; r != nil {
		switch r.GetStatus() {
		case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR:
			return statusError
		case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED:
			return statusCancelled
		case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED:
			return statusAborted
		}
		return statusOK
	}
	switch {
	case c.deferred != "":
		return statusWaiting
	case c.running:
		return statusRunning
	}
	return statusPending
}

func (c *call) helper() bool {
	return c.call.GetKind() == agentsv1.ToolKind_TOOL_KIND_HELPER || c.child != "" || c.result.GetChildSessionId() != ""
}

// childID is the helper session of the call, empty when there is none.
func (c *call) childID() string {
	if id := c.result.GetChildSessionId(); id != "" {
		return id
	}
	return c.child
}

// helperAgent is the slug of the helper agent: the one the child session
// announced, or the one the tool is named for.
func (c *call) helperAgent() string {
	if c.agent != "" {
		return c.agent
	}
	name := c.call.GetName()
	if name == "" {
		name = c.result.GetName()
	}
	return strings.TrimPrefix(name, "prompt_agent_")
}

func (c *call) name() string {
	if n := c.call.GetName(); n != "" {
		return n
	}
	return c.result.GetName()
}

// calls indexes every call of the loaded turns and live events by id.
type calls map[string]*call

func (cs calls) get(id string) *call {
	c, ok := cs[id]
	if !ok {
		c = &call{owner: -1}
		cs[id] = c
	}
	return c
}

// asked records the calls of an LLM turn.
func (cs calls) asked(owner int, tc []*agentsv1.ToolCall) {
	for _, t := range tc {
		c := cs.get(t.GetId())
		c.call, c.owner = t, owner
	}
}

// answered records results; it returns the turns whose calls they answer.
func (cs calls) answered(results []*agentsv1.ToolResult) []int {
	var owners []int
	for _, r := range results {
		c := cs.get(r.GetCallId())
		c.result, c.running, c.progress, c.deferred = r, false, "", ""
		owners = append(owners, c.owner)
	}
	return owners
}
