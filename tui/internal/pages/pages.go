// Package pages reads every page of a listing the server hands out in
// pages, for screens that show the whole of it.
package pages

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Lister is the call that lists sessions, as the generated Connect client
// of the session service makes it.
type Lister interface {
	ListSessions(context.Context, *connect.Request[agentsv1.ListSessionsRequest]) (*connect.Response[agentsv1.ListSessionsResponse], error)
}

// pageSize is the server's largest page: the fewest round trips.
const pageSize = 500

// Sessions lists every session req selects, following next_page_token to
// the last page.
func Sessions(ctx context.Context, svc Lister, req *agentsv1.ListSessionsRequest) ([]*agentsv1.SessionMeta, error) {
	r := proto.CloneOf(req)
	r.PageSize = pageSize
	var all []*agentsv1.SessionMeta
	for {
		res, err := svc.ListSessions(ctx, connect.NewRequest(r))
		if err != nil {
			return nil, err
		}
		all = append(all, res.Msg.GetSessions()...)
		if res.Msg.GetNextPageToken() == "" {
			return all, nil
		}
		r.PageToken = res.Msg.GetNextPageToken()
	}
}
