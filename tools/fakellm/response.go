package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// completion is a as a non-streaming answer.
func (a answer) completion() wireCompletion {
	msg := wireAnswerMessage{Role: "assistant", ReasoningContent: a.reasoning}
	if a.text != "" || len(a.toolCalls) == 0 {
		msg.Content = new(a.text)
	}
	for _, c := range a.toolCalls {
		msg.ToolCalls = append(msg.ToolCalls, wireAnswerToolCall{
			ID: c.id, Type: "function", Function: wireFunction{Name: c.name, Arguments: c.arguments},
		})
	}
	return wireCompletion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		Choices: []wireChoice{{Message: msg, FinishReason: a.finishReason}},
		Usage:   a.usage,
	}
}

func writeHTTPError(w http.ResponseWriter, e HTTPError) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	if e.Body != "" {
		contentType := "text/plain; charset=utf-8"
		if json.Valid([]byte(e.Body)) {
			contentType = "application/json"
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(e.Status)
		io.WriteString(w, e.Body)
		return
	}
	message := e.Message
	if message == "" {
		message = http.StatusText(e.Status)
	}
	writeError(w, e.Status, errorType(e.Status), message)
}

// errorType is the OpenAI error type that goes with a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// writeContextLengthExceeded refuses req as OpenAI refuses a prompt that
// does not fit the model, with the same status, body and wording (one
// wording when the request reserves output, another when it does not), so
// that clients recognize it as they would the provider's.
func writeContextLengthExceeded(w http.ResponseWriter, req Request) {
	var message string
	if req.MaxOutputTokens > 0 {
		message = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			req.ContextWindow, req.PromptTokens+req.MaxOutputTokens, req.PromptTokens, req.MaxOutputTokens)
	} else {
		message = fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.",
			req.ContextWindow, req.PromptTokens)
	}
	writeJSON(w, http.StatusBadRequest, wireErrorBody{Error: wireError{
		Message: message, Type: "invalid_request_error", Param: "messages", Code: "context_length_exceeded",
	}})
}

func writeError(w http.ResponseWriter, status int, typ, message string) {
	writeJSON(w, status, wireErrorBody{Error: wireError{Message: message, Type: typ}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakellm: encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
