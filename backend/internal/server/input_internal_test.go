package server

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// TestEveryTextFieldOfARequestHasALimit walks the request messages of
// every RPC: each string or bytes field a client can send must be a short
// field with a character limit, a sized field bounded by Limits, or params.
// A field added to the protos without a limit fails here.
func TestEveryTextFieldOfARequestHasALimit(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			switch {
			case fd.IsMap():
				if fd.Name() != "params" {
					t.Errorf("%s: a map other than params has no limits", fd.FullName())
				}
			case fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind:
				if _, short := shortFields[fd.Name()]; !short && !sizedFields[fd.Name()] {
					t.Errorf("%s: no limit", fd.FullName())
				}
			case fd.Kind() == protoreflect.MessageKind:
				walk(fd.Message())
			}
		}
	}
	for _, file := range []protoreflect.FileDescriptor{
		agentsv1.File_agents_v1_agent_proto,
		agentsv1.File_agents_v1_session_service_proto,
		agentsv1.File_agents_v1_event_proto,
	} {
		services := file.Services()
		for i := range services.Len() {
			methods := services.Get(i).Methods()
			for j := range methods.Len() {
				walk(methods.Get(j).Input())
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("walked %d request messages; the services were not found", len(seen))
	}
}
