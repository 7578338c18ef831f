package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// idLength is the length of session ids and call tokens (UUIDs): an
// argument that long is used as it is, a shorter one is a prefix.
const idLength = 36

// mostMatchesShown bounds the matches an ambiguous prefix's error lists.
const mostMatchesShown = 10

// resolveSession returns the session id arg is, or the one it is the
// only prefix of among the caller's sessions.
func resolveSession(ctx context.Context, c *client.Client, arg string) (string, error) {
	if len(arg) >= idLength {
		return arg, nil
	}
	sessions, err := listAllSessions(ctx, c, &agentsv1.ListSessionsRequest{})
	if err != nil {
		return "", err
	}
	var matches []candidate
	for _, s := range sessions {
		if strings.HasPrefix(s.GetId(), arg) {
			matches = append(matches, candidate{s.GetId(), oneLine(s.GetTitle(), 40)})
		}
	}
	return onlyMatch("session", arg, matches)
}

// resolveCall returns the call token arg is, or the one it is the only
// prefix of among the caller's pending calls, with the call's session:
// "" for a whole token no pending call of the caller's has (the server
// says why when it is answered).
func resolveCall(ctx context.Context, c *client.Client, arg string) (token, sessionID string, err error) {
	calls, err := pendingCalls(ctx, c, "")
	if err != nil {
		return "", "", err
	}
	if len(arg) >= idLength {
		for _, d := range calls {
			if d.GetToken() == arg {
				return arg, d.GetSessionId(), nil
			}
		}
		return arg, "", nil
	}
	var matches []candidate
	sessions := map[string]string{}
	for _, d := range calls {
		if strings.HasPrefix(d.GetToken(), arg) {
			matches = append(matches, candidate{d.GetToken(), d.GetCall().GetName() + " in session " + d.GetSessionId()})
			sessions[d.GetToken()] = d.GetSessionId()
		}
	}
	token, err = onlyMatch("pending call", arg, matches)
	return token, sessions[token], err
}

// candidate is an id a prefix may stand for, with what the user knows it
// by.
type candidate struct{ id, label string }

// onlyMatch is the id of the one match of prefix, or an error saying
// there is none or listing them.
func onlyMatch(what, prefix string, matches []candidate) (string, error) {
	switch {
	case prefix == "":
		return "", fmt.Errorf("an empty %s id", what)
	case len(matches) == 1:
		return matches[0].id, nil
	case len(matches) == 0:
		return "", fmt.Errorf("no %s id starts with %q", what, prefix)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%q is the start of %s; give more of the id:", prefix, plural(len(matches), what))
	for _, m := range matches[:min(len(matches), mostMatchesShown)] {
		fmt.Fprintf(&b, "\n  %s  %s", m.id, m.label)
	}
	if n := len(matches) - mostMatchesShown; n > 0 {
		fmt.Fprintf(&b, "\n  … and %d more", n)
	}
	return "", errors.New(b.String())
}

// listAllSessions reads every page of a listing.
func listAllSessions(ctx context.Context, c *client.Client, req *agentsv1.ListSessionsRequest) ([]*agentsv1.SessionMeta, error) {
	req.PageSize = 500
	var all []*agentsv1.SessionMeta
	for {
		res, err := c.Sessions.ListSessions(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, describe(err)
		}
		all = append(all, res.Msg.GetSessions()...)
		next := res.Msg.GetNextPageToken()
		// A token that does not move on would list the same page forever.
		if next == "" || next == req.GetPageToken() {
			return all, nil
		}
		req.PageToken = next
	}
}

// pendingCalls lists the deferred calls waiting for an answer: those of
// one session, or of every session of the caller's when sessionID is "".
func pendingCalls(ctx context.Context, c *client.Client, sessionID string) ([]*agentsv1.DeferredCall, error) {
	ids := []string{sessionID}
	if sessionID == "" {
		sessions, err := listAllSessions(ctx, c, &agentsv1.ListSessionsRequest{})
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, s := range sessions {
			if s.GetPendingCalls() > 0 {
				ids = append(ids, s.GetId())
			}
		}
	}
	var calls []*agentsv1.DeferredCall
	for _, id := range ids {
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			return nil, describe(err)
		}
		calls = append(calls, res.Msg.GetSession().GetPendingCalls()...)
	}
	return calls, nil
}
