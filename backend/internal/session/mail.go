package session

import "time"

// Priority orders mail; urgent mail interrupts the step in flight.
type Priority string

// The priorities.
const (
	PriorityNormal Priority = "normal"
	PriorityUrgent Priority = "urgent"
)

// SenderKind says who sent mail.
type SenderKind string

// The sender kinds.
const (
	SenderUser    SenderKind = "user"
	SenderSession SenderKind = "session"
	SenderSystem  SenderKind = "system"
)

// Sender names who sent mail: an owner, a session id or a server component.
type Sender struct {
	Kind SenderKind `json:"kind"`
	Name string     `json:"name"`
}

// MailKind is the kind of a mail body.
type MailKind string

// The mail kinds: two carry text for the model, three are runner controls.
const (
	MailUserMessage  MailKind = "user_message"
	MailAgentMessage MailKind = "agent_message"
	MailStopRun      MailKind = "stop_run"
	MailCancelCalls  MailKind = "cancel_calls"
	MailResume       MailKind = "resume"
)

// IsControl reports whether the body orders the runner rather than
// speaking to the model.
func (k MailKind) IsControl() bool {
	return k == MailStopRun || k == MailCancelCalls || k == MailResume
}

// MailBody is the content of a piece of mail.
type MailBody struct {
	Kind MailKind `json:"kind"`
	// Text is the message text (user and agent messages).
	Text string `json:"text,omitempty"`
	// Agent is the sending agent's slug (agent messages).
	Agent string `json:"agent,omitempty"`
	// AttachmentNames lists files of a user message.
	AttachmentNames []string `json:"attachment_names,omitempty"`
	// Attachments are the files themselves while the mail is pending; they
	// move to the user turn the mail is folded into.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Reason explains a control order.
	Reason string `json:"reason,omitempty"`
}

// Mail is one envelope in a session's mailbox.
type Mail struct {
	ID        string     `json:"id"`
	SessionID string     `json:"session_id"`
	Sender    Sender     `json:"sender"`
	Priority  Priority   `json:"priority"`
	Body      MailBody   `json:"body"`
	Created   time.Time  `json:"created"`
	Delivered *time.Time `json:"delivered,omitempty"`
}
