package catalog

import (
	"encoding/json"

	"github.com/agents-os/agents/backend/internal/session"
)

// The system tools every agent is offered: its window on the operating
// system it runs in.
const (
	ToolSendMail        = "os_send_mail"
	ToolListSubSessions = "os_list_sub_sessions"
	ToolWatchSession    = "os_watch_session"
)

func systemTools() []*Tool {
	return []*Tool{
		{
			Name:        ToolSendMail,
			Description: "Send a message to another session of the same owner; it reaches that session's agent at its next step, or wakes it when idle.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"session_id":{"type":"string","description":"The recipient session id."},"text":{"type":"string","description":"The message."},"urgent":{"type":"boolean","description":"Interrupt the recipient's current step."}},"required":["session_id","text"]}`),
			Kind:        session.ToolSystem,
			Source:      "system",
		},
		{
			Name:        ToolListSubSessions,
			Description: "List the sub-sessions (helper agent runs) this session started, with their status.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
			Kind:        session.ToolSystem,
			Source:      "system",
		},
		{
			Name:        ToolWatchSession,
			Description: "Watch another session: when its run stops or fails you receive a message saying so.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"session_id":{"type":"string","description":"The session to watch."},"ttl_seconds":{"type":"integer","description":"How long to watch; one hour when omitted."}},"required":["session_id"]}`),
			Kind:        session.ToolSystem,
			Source:      "system",
		},
	}
}
