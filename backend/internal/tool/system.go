package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// The system tools every agent is offered: its window on the operating
// system it runs in.
const (
	SendMailName        = "os_send_mail"
	ListSubSessionsName = "os_list_sub_sessions"
	WatchSessionName    = "os_watch_session"
)

// System returns the system tools, in offering order.
func System() []Tool {
	return []Tool{
		&system{spec: systemSpec(SendMailName,
			"Send a message to another session of the same owner; it reaches that session's agent at its next step, or wakes it when idle.",
			`{"type":"object","properties":{"session_id":{"type":"string","description":"The recipient session id."},"text":{"type":"string","description":"The message."},"urgent":{"type":"boolean","description":"Interrupt the recipient's current step."}},"required":["session_id","text"]}`),
			run: sendMail},
		&system{spec: systemSpec(ListSubSessionsName,
			"List the sub-sessions (helper agent runs) this session started, with their status.",
			`{"type":"object","properties":{}}`),
			run: listSubSessions},
		&system{spec: systemSpec(WatchSessionName,
			"Watch another session: when its run stops or fails you receive a message saying so.",
			`{"type":"object","properties":{"session_id":{"type":"string","description":"The session to watch."},"ttl_seconds":{"type":"integer","description":"How long to watch; one hour when omitted."}},"required":["session_id"]}`),
			run: watchSession},
	}
}

func systemSpec(name, description, schema string) Spec {
	return Spec{Name: name, Description: description, Parameters: json.RawMessage(schema), Kind: session.ToolSystem, Source: "system"}
}

// system is one system tool: its calls act as the calling session,
// within its owner, through the host.
type system struct {
	spec Spec
	run  func(ctx context.Context, call Call, args systemArgs) Result
}

// systemArgs is the union of the system tools' arguments.
type systemArgs struct {
	SessionID  string `json:"session_id"`
	Text       string `json:"text"`
	Urgent     bool   `json:"urgent"`
	TTLSeconds int    `json:"ttl_seconds"`
}

func (s *system) Spec() Spec             { return s.spec }
func (s *system) Mode() session.CallMode { return session.CallAttached }

func (s *system) Execute(ctx context.Context, call Call) Result {
	var args systemArgs
	if err := call.DecodeArguments(&args); err != nil {
		return Failed("arguments are not a JSON object: " + err.Error())
	}
	return s.run(ctx, call, args)
}

func sendMail(ctx context.Context, call Call, args systemArgs) Result {
	id, err := call.Host.SendMail(ctx, args.SessionID, args.Text, args.Urgent)
	if err != nil {
		return Failed(err.Error())
	}
	return OK("mail " + id + " delivered to session " + args.SessionID)
}

func listSubSessions(ctx context.Context, call Call, _ systemArgs) Result {
	rows, err := call.Host.SubSessions(ctx)
	if err != nil {
		return Failed(err.Error())
	}
	if rows == nil {
		rows = []SubSession{}
	}
	b, _ := json.Marshal(rows)
	return OK(string(b))
}

func watchSession(ctx context.Context, call Call, args systemArgs) Result {
	until, err := call.Host.Watch(ctx, args.SessionID, time.Duration(args.TTLSeconds)*time.Second)
	if err != nil {
		return Failed(err.Error())
	}
	return OK(fmt.Sprintf("watching session %s until %s", args.SessionID, until.Format(time.RFC3339)))
}
