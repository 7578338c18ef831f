package tokens

import "github.com/agents-os/agents/backend/internal/llm"

// The framing a request adds around its texts, in tokens.
//
// OpenAI documents how its chat models frame a conversation (the
// cookbook's "How to count tokens with tiktoken"): every message is
// <|start|>{role}<|message|>{content}<|end|>, three tokens plus the
// role's, and the reply is primed with <|start|>assistant<|message|>,
// three more. How tool calls, tool results and tool definitions are
// rendered is not documented; the figures for them below are chosen to be
// above what they can cost.
const (
	// perMessage is the documented framing of a message, its role aside.
	perMessage = 3
	// replyPriming is the documented start of the reply every request
	// ends with.
	replyPriming = 3
	// estimatedPerMessage is the framing of a message, role included, for
	// a model without a tokenizer: Llama 3's template spends 5
	// (<|start_header_id|>role<|end_header_id|>\n\n … <|eot_id|>), Mistral's
	// fewer.
	estimatedPerMessage = 6
	// perToolCall frames one call of an assistant message besides its
	// name and arguments: OpenAI renders it as a message of its own
	// addressed "to=functions.NAME", in JSON, ended by <|call|>.
	perToolCall = 10
	// perToolResult frames a tool message besides its content: the
	// function's name and its address ("functions.NAME to=assistant").
	perToolResult = 10
	// perThinking frames the reasoning sent back with an assistant
	// message.
	perThinking = 4
	// perTool frames one tool definition: the JSON of
	// {"type":"function","function":{"name":,"description":,"parameters":}}
	// around its texts is 16 tokens under both encodings, more than the
	// TypeScript-like rendering OpenAI documents for it.
	perTool = 16
	// estimatedPerTool frames one tool definition for a model without a
	// tokenizer: half as much again, for templates that show the tools'
	// JSON whole (Mistral's) to a tokenizer other than OpenAI's.
	estimatedPerTool = 24
	// toolsHeader frames the list of tool definitions (OpenAI documents
	// 12 for the end of the list of functions).
	toolsHeader = 12
	// ImageTokens is what an image is counted as, whatever its size: the
	// request holds a URL, not the pixels. It is what Claude charges for
	// the largest image it takes without scaling it down (about 1.15
	// megapixels at 750 pixels a token), above OpenAI's high-detail
	// price of any image on gpt-4o (at most 1,445 tokens; 765 for
	// 1024×1024). Models priced by 32-pixel patch (gpt-4.1-mini and -nano,
	// o4-mini) can cost more for a large image.
	ImageTokens = 1600
)

// Message counts m as the wire sends it: its content, its framing, its
// images, its tool calls (name and arguments), and its thinking where the
// flavor sends it back (WithFlavor).
func (c *Counter) Message(m llm.Message) int {
	n := c.frame() + c.Text(m.Text) + ImageTokens*len(m.Images)
	for _, call := range m.ToolCalls {
		args := call.Arguments
		if args == "" {
			args = "{}" // what the wire sends for a call without arguments
		}
		n += perToolCall + c.Text(call.Name) + c.Text(args)
		if c.enc == nil {
			// Some templates show the call's ID to the model (Mistral's).
			n += Estimate(call.ID)
		}
	}
	if m.Role == llm.RoleTool {
		n += perToolResult
		if c.enc == nil {
			n += Estimate(m.ToolCallID)
		}
	}
	if c.echoThinking && m.Role == llm.RoleAssistant && (m.Thinking != "" || len(m.ToolCalls) > 0) {
		n += perThinking + max(1, c.Text(m.Thinking)) // a placeholder stands in for none
	}
	return n
}

// frame is the framing of a message, its role included.
func (c *Counter) frame() int {
	if c.enc == nil {
		return estimatedPerMessage
	}
	// Every role's name is one token in both encodings.
	return perMessage + 1
}

// Messages counts msgs, each as Message counts it.
func (c *Counter) Messages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += c.Message(m)
	}
	return n
}

// Tools counts the tool definitions as the wire sends them: each one's
// name, description and parameter schema, with its framing.
func (c *Counter) Tools(specs []llm.ToolSpec) int {
	if len(specs) == 0 {
		return 0
	}
	n := toolsHeader
	for _, s := range specs {
		params := string(s.Parameters)
		if params == "" {
			params = `{"type":"object","properties":{}}` // as the wire sends it
		}
		n += c.toolFrame() + c.Text(s.Name) + c.Text(s.Description) + c.Text(params)
	}
	return n
}

// toolFrame is the framing of one tool definition.
func (c *Counter) toolFrame() int {
	if c.enc == nil {
		return estimatedPerTool
	}
	return perTool
}

// Request counts all of r's input: its messages, its tools, and the start
// of the reply.
func (c *Counter) Request(r llm.Request) int {
	return c.Messages(r.Messages) + c.Tools(r.Tools) + replyPriming
}
