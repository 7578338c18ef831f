package fakellm

// The OpenAI chat-completions response shapes the server writes.

type wireUsage struct {
	PromptTokens            int                         `json:"prompt_tokens"`
	CompletionTokens        int                         `json:"completion_tokens"`
	TotalTokens             int                         `json:"total_tokens"`
	PromptTokensDetails     wirePromptTokensDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails wireCompletionTokensDetails `json:"completion_tokens_details"`
}

type wirePromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type wireCompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// wireCompletion is a non-streaming answer.
type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int               `json:"index"`
	Message      wireAnswerMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

type wireAnswerMessage struct {
	Role string `json:"role"`
	// Content is null when the assistant only calls tools, as OpenAI does.
	Content          *string              `json:"content"`
	ReasoningContent string               `json:"reasoning_content,omitempty"`
	ToolCalls        []wireAnswerToolCall `json:"tool_calls,omitempty"`
}

type wireAnswerToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// wireChunk is one streamed event.
type wireChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage,omitempty"`
}

type wireChunkChoice struct {
	Index int       `json:"index"`
	Delta wireDelta `json:"delta"`
	// FinishReason is null on every chunk but the last.
	FinishReason *string `json:"finish_reason"`
}

type wireDelta struct {
	Role             string              `json:"role,omitempty"`
	Content          *string             `json:"content,omitempty"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls,omitempty"`
}

type wireToolCallDelta struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireErrorBody struct {
	Error wireError `json:"error"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
}

type wireModelList struct {
	Object string      `json:"object"`
	Data   []wireModel `json:"data"`
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}
