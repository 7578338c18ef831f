package wire

import (
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Mail converts an envelope. A user message's body names its files but
// never carries their bytes (they move to the turn the mail is folded
// into), so the envelope is as fit for events (mail.accepted) as for
// ListMail.
func Mail(m session.Mail) *agentsv1.MailEnvelope {
	out := &agentsv1.MailEnvelope{
		Id:         m.ID,
		SessionId:  m.SessionID,
		Sender:     sender(m.Sender),
		Priority:   Priority(m.Priority),
		Body:       MailBody(m.Body),
		CreateTime: Timestamp(m.Created),
	}
	if m.Delivered != nil {
		out.DeliverTime = Timestamp(*m.Delivered)
	}
	return out
}

func sender(s session.Sender) *agentsv1.MailSender {
	switch s.Kind {
	case session.SenderSession:
		return &agentsv1.MailSender{Kind: &agentsv1.MailSender_SessionId{SessionId: s.Name}}
	case session.SenderSystem:
		return &agentsv1.MailSender{Kind: &agentsv1.MailSender_System{System: s.Name}}
	}
	return &agentsv1.MailSender{Kind: &agentsv1.MailSender_User{User: s.Name}}
}

// Priority converts a mail priority.
func Priority(p session.Priority) agentsv1.MailPriority {
	if p == session.PriorityUrgent {
		return agentsv1.MailPriority_MAIL_PRIORITY_URGENT
	}
	return agentsv1.MailPriority_MAIL_PRIORITY_NORMAL
}

// PriorityFromWire converts a wire priority; unspecified is normal.
func PriorityFromWire(p agentsv1.MailPriority) session.Priority {
	if p == agentsv1.MailPriority_MAIL_PRIORITY_URGENT {
		return session.PriorityUrgent
	}
	return session.PriorityNormal
}

// MailBody converts a mail body.
func MailBody(b session.MailBody) *agentsv1.MailBody {
	switch b.Kind {
	case session.MailUserMessage:
		return &agentsv1.MailBody{Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: b.Text, AttachmentNames: b.AttachmentNames}}}
	case session.MailAgentMessage:
		return &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Agent: b.Agent, Text: b.Text}}}
	case session.MailStopRun:
		return control(&agentsv1.ControlMessage{Kind: &agentsv1.ControlMessage_StopRun{StopRun: &agentsv1.StopRun{Reason: b.Reason}}})
	case session.MailCancelCalls:
		return control(&agentsv1.ControlMessage{Kind: &agentsv1.ControlMessage_CancelCalls{CancelCalls: &agentsv1.CancelCalls{Reason: b.Reason}}})
	case session.MailResume:
		return control(&agentsv1.ControlMessage{Kind: &agentsv1.ControlMessage_Resume{Resume: &agentsv1.ResumeRun{Reason: b.Reason}}})
	}
	return &agentsv1.MailBody{}
}

func control(c *agentsv1.ControlMessage) *agentsv1.MailBody {
	return &agentsv1.MailBody{Kind: &agentsv1.MailBody_Control{Control: c}}
}

// MailBodyFromWire converts a wire mail body; an empty one is invalid.
func MailBodyFromWire(b *agentsv1.MailBody) (session.MailBody, error) {
	switch k := b.GetKind().(type) {
	case *agentsv1.MailBody_UserMessage:
		return session.MailBody{Kind: session.MailUserMessage, Text: k.UserMessage.GetText(), AttachmentNames: k.UserMessage.GetAttachmentNames()}, nil
	case *agentsv1.MailBody_AgentMessage:
		return session.MailBody{Kind: session.MailAgentMessage, Text: k.AgentMessage.GetText(), Agent: k.AgentMessage.GetAgent()}, nil
	case *agentsv1.MailBody_Control:
		switch c := k.Control.GetKind().(type) {
		case *agentsv1.ControlMessage_StopRun:
			return session.MailBody{Kind: session.MailStopRun, Reason: c.StopRun.GetReason()}, nil
		case *agentsv1.ControlMessage_CancelCalls:
			return session.MailBody{Kind: session.MailCancelCalls, Reason: c.CancelCalls.GetReason()}, nil
		case *agentsv1.ControlMessage_Resume:
			return session.MailBody{Kind: session.MailResume, Reason: c.Resume.GetReason()}, nil
		}
		return session.MailBody{}, errs.Invalid(errs.CodeInvalidArgument, "control mail needs its order: control is one of stop_run, cancel_calls, resume")
	}
	return session.MailBody{}, errs.Invalid(errs.CodeInvalidArgument, "mail body is empty: set one of user_message, agent_message, control")
}
