package cli

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// A gRPC client (grpc-go, over HTTP/2 without TLS, as grpcurl -plaintext
// dials) finds the services of `agents serve` by reflection, describes
// them, and calls one, all behind the server's tokens.
func TestServeAnswersGRPCReflectionAndCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "good.json")
	writeFile(t, agent, agentJSON("good", ""), 0o644)
	tokens := filepath.Join(dir, "tokens.json")
	writeFile(t, tokens, `{"tokens": [{"token": "alice-token-0123456789", "owner": "alice"}]}`, 0o600)
	p := startServe(t, dir, "--agent-file", agent, "--db", filepath.Join(dir, "agents.db"), "--auth-tokens", tokens)

	conn, err := grpc.NewClient(strings.TrimPrefix(p.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer alice-token-0123456789")

	// v1: list, then describe the agent service from its file.
	v1, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(authed)
	if err != nil {
		t.Fatal(err)
	}
	res := exchange(t, v1, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{}})
	var names []string
	for _, s := range res.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"agents.v1.AgentService", "agents.v1.SessionService", "agents.v1.EventService", "agents.v1.OwnerService"} {
		if !slices.Contains(names, want) {
			t.Errorf("list services = %v, lacks %s", names, want)
		}
	}
	res = exchange(t, v1, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "agents.v1.AgentService"}})
	if methods := serviceMethods(t, res.GetFileDescriptorResponse().GetFileDescriptorProto(), "AgentService"); !slices.Contains(methods, "ListAgents") {
		t.Errorf("AgentService methods = %v, lack ListAgents", methods)
	}
	if err := v1.CloseSend(); err != nil {
		t.Fatal(err)
	}

	// v1alpha, which older tools ask for, answers the same.
	alpha, err := reflectionv1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(authed)
	if err != nil {
		t.Fatal(err)
	}
	if err := alpha.Send(&reflectionv1alpha.ServerReflectionRequest{MessageRequest: &reflectionv1alpha.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	ares, err := alpha.Recv()
	if err != nil {
		t.Fatalf("v1alpha list services: %v", err)
	}
	if n := len(ares.GetListServicesResponse().GetService()); n != 4 {
		t.Errorf("v1alpha lists %d services, want 4: %v", n, ares)
	}

	// A plain gRPC call: what grpcurl does once it has the schema.
	var agents agentsv1.ListAgentsResponse
	if err := conn.Invoke(authed, "/agents.v1.AgentService/ListAgents", &agentsv1.ListAgentsRequest{}, &agents); err != nil {
		t.Fatalf("ListAgents over gRPC: %v", err)
	}
	if got := agents.GetAgents(); len(got) != 1 || got[0].GetSlug() != "good" {
		t.Errorf("ListAgents = %v, want the agent good", got)
	}

	// Without the token, reflection is refused like every other route.
	anon, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err == nil {
		err = anon.Send(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{}})
		// A send to a stream the server already ended says io.EOF; the
		// stream's status comes from Recv.
		if err == nil || errors.Is(err, io.EOF) {
			_, err = anon.Recv()
		}
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("reflection without a token: %v, want unauthenticated", err)
	}
}

// exchange sends one reflection request and returns its answer.
func exchange(t *testing.T, stream grpc.BidiStreamingClient[reflectionv1.ServerReflectionRequest, reflectionv1.ServerReflectionResponse], req *reflectionv1.ServerReflectionRequest) *reflectionv1.ServerReflectionResponse {
	t.Helper()
	if err := stream.Send(req); err != nil {
		t.Fatal(err)
	}
	res, err := stream.Recv()
	if err != nil {
		t.Fatalf("reflection %v: %v", req, err)
	}
	if e := res.GetErrorResponse(); e != nil {
		t.Fatalf("reflection %v: %s", req, e.GetErrorMessage())
	}
	return res
}

// serviceMethods finds service in serialized file descriptors and returns
// its method names.
func serviceMethods(t *testing.T, files [][]byte, service string) []string {
	t.Helper()
	for _, b := range files {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &fd); err != nil {
			t.Fatal(err)
		}
		for _, s := range fd.GetService() {
			if s.GetName() == service {
				var names []string
				for _, m := range s.GetMethod() {
					names = append(names, m.GetName())
				}
				return names
			}
		}
	}
	t.Fatalf("no service %s in the %d files described", service, len(files))
	return nil
}
