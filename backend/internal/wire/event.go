package wire

import (
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

// EventTurn is Turn for an event: attachments keep their name and media
// type but not their bytes, which a client reads from the session's turn
// when it wants them. Events are kept in memory for replay and in the
// event log, so they must not carry what a client uploaded.
func EventTurn(t session.Turn) *agentsv1.Turn {
	out := Turn(t)
	if u := out.GetUser(); u != nil {
		for i, att := range u.Attachments {
			u.Attachments[i] = &agentsv1.Attachment{Name: att.Name, MediaType: att.MediaType}
		}
	}
	return out
}

// EventMail is Mail for an event: attachments are named, not carried.
func EventMail(m session.Mail) *agentsv1.MailEnvelope {
	m.Body.Attachments = nil
	return Mail(m)
}
