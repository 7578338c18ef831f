package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// ownerService serves OwnerService.
type ownerService struct {
	agentsv1connect.UnimplementedOwnerServiceHandler
	s *Server
}

var _ agentsv1connect.OwnerServiceHandler = (*ownerService)(nil)

func (h *sessionService) UpdateSession(context.Context, *connect.Request[agentsv1.UpdateSessionRequest]) (*connect.Response[agentsv1.UpdateSessionResponse], error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("UpdateSession is not implemented yet"))
}
