package server

import "github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"

// sessionService serves SessionService. Operations the runner does not offer
// yet answer `unimplemented`.
type sessionService struct {
	agentsv1connect.UnimplementedSessionServiceHandler
	s *Server
}
