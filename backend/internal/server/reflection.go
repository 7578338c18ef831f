package server

import (
	"net/http"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/reflection"
)

// mountReflection serves gRPC server reflection, so grpcurl, buf curl and
// Postman find the services and their messages without the proto files.
// Both versions are served: v1 is the standard, and many tools still ask
// for v1alpha first. The reflection handlers sit in the same mux as the
// services, behind the same authentication: the schema is no secret, but a
// server that answers strangers only with health has less to scan.
func mountReflection(mux *http.ServeMux, opts ...connect.HandlerOption) {
	services := []string{
		agentsv1connect.AgentServiceName,
		agentsv1connect.SessionServiceName,
		agentsv1connect.EventServiceName,
		agentsv1connect.OwnerServiceName,
	}
	for path, h := range reflection.Handlers(services, opts...) {
		mux.Handle(path, h)
	}
}
