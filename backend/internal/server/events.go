package server

import "github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"

// eventService serves EventService.
type eventService struct {
	agentsv1connect.UnimplementedEventServiceHandler
	s *Server
}
