package reflection

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

var services = []string{agentsv1connect.AgentServiceName, agentsv1connect.SessionServiceName, agentsv1connect.EventServiceName}

// start serves reflection over unencrypted HTTP/2 and dials it with
// grpc-go, as grpcurl -plaintext does.
func start(t *testing.T) *grpc.ClientConn {
	t.Helper()
	mux := http.NewServeMux()
	for path, h := range Handlers(services) {
		mux.Handle(path, h)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := grpc.NewClient(strings.TrimPrefix(srv.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func stream(t *testing.T, conn *grpc.ClientConn) grpc.BidiStreamingClient[reflectionv1.ServerReflectionRequest, reflectionv1.ServerReflectionResponse] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	s, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ask(t *testing.T, s grpc.BidiStreamingClient[reflectionv1.ServerReflectionRequest, reflectionv1.ServerReflectionResponse], req *reflectionv1.ServerReflectionRequest) *reflectionv1.ServerReflectionResponse {
	t.Helper()
	if err := s.Send(req); err != nil {
		t.Fatal(err)
	}
	res, err := s.Recv()
	if err != nil {
		t.Fatalf("%v: %v", req, err)
	}
	if !proto.Equal(res.GetOriginalRequest(), req) {
		t.Errorf("original_request = %v, want %v", res.GetOriginalRequest(), req)
	}
	return res
}

// fileNames decodes the files of a file_descriptor_response.
func fileNames(t *testing.T, res *reflectionv1.ServerReflectionResponse) []string {
	t.Helper()
	if e := res.GetErrorResponse(); e != nil {
		t.Fatalf("error response %d: %s", e.GetErrorCode(), e.GetErrorMessage())
	}
	var names []string
	for _, b := range res.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &fd); err != nil {
			t.Fatal(err)
		}
		names = append(names, fd.GetName())
	}
	return names
}

// Every file of the API is sent as the descriptor protodesc builds of it
// from the registry (what connectrpc.com/grpcreflect sent).
func TestFilesAreSentAsTheirDescriptors(t *testing.T) {
	t.Parallel()
	var files []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage("agents.v1", func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	for i := 0; i < len(files); i++ { // and what they import
		imports := files[i].Imports()
		for j := range imports.Len() {
			if fd := imports.Get(j).FileDescriptor; !slices.Contains(files, fd) {
				files = append(files, fd)
			}
		}
	}
	if len(files) < 8 {
		t.Fatalf("found %d files of agents.v1 and their imports", len(files))
	}
	for _, fd := range files {
		b, err := compiled(fd)
		if err != nil {
			t.Errorf("%s: %v", fd.Path(), err)
			continue
		}
		var got descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", fd.Path(), err)
		}
		if want := protodesc.ToFileDescriptorProto(fd); !proto.Equal(&got, want) {
			t.Errorf("%s: sent\n%v\nwant\n%v", fd.Path(), &got, want)
		}
	}
}

func TestReflectionAnswersEachRequest(t *testing.T) {
	t.Parallel()
	conn := start(t)
	s := stream(t, conn)

	res := ask(t, s, &reflectionv1.ServerReflectionRequest{Host: "h", MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{ListServices: "*"}})
	var names []string
	for _, svc := range res.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	if !slices.Equal(names, services) {
		t.Errorf("services = %v, want %v", names, services)
	}
	if res.GetValidHost() != "h" {
		t.Errorf("valid_host = %q, want h", res.GetValidHost())
	}

	// A file comes with its imports, each sent once on a stream.
	session := agentsv1.File_agents_v1_session_proto.Path()
	got := fileNames(t, ask(t, s, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileByFilename{FileByFilename: session}}))
	if len(got) < 2 || got[0] != session || !slices.Contains(got, "google/protobuf/timestamp.proto") {
		t.Errorf("file %s sent %v, want it first, then its imports", session, got)
	}
	got = fileNames(t, ask(t, s, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileByFilename{FileByFilename: session}}))
	if !slices.Equal(got, []string{session}) {
		t.Errorf("file %s again sent %v, want it alone", session, got)
	}

	// A symbol: a service, a method, a nested message, a field.
	for _, sym := range []string{"agents.v1.AgentService", "agents.v1.AgentService.ListAgents", "agents.v1.ListAgentsResponse", "agents.v1.ListAgentsResponse.agents"} {
		got := fileNames(t, ask(t, s, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: sym}}))
		if len(got) == 0 || got[0] != "agents/v1/agent.proto" {
			t.Errorf("symbol %s: sent %v, want agents/v1/agent.proto first", sym, got)
		}
	}

	// Extensions: none of the API's messages has one; an unknown
	// message is not found.
	res = ask(t, s, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: "agents.v1.AgentVersion"}})
	if r := res.GetAllExtensionNumbersResponse(); r.GetBaseTypeName() != "agents.v1.AgentVersion" || len(r.GetExtensionNumber()) != 0 {
		t.Errorf("extension numbers of agents.v1.Agent = %v", res)
	}

	for _, req := range []*reflectionv1.ServerReflectionRequest{
		{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "agents.v1.NoSuchThing"}},
		{MessageRequest: &reflectionv1.ServerReflectionRequest_FileByFilename{FileByFilename: "agents/v1/none.proto"}},
		{MessageRequest: &reflectionv1.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: "agents.v1.NoSuchThing"}},
		{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingExtension{FileContainingExtension: &reflectionv1.ExtensionRequest{ContainingType: "agents.v1.AgentVersion", ExtensionNumber: 1000}}},
	} {
		res := ask(t, s, req)
		if e := res.GetErrorResponse(); codes.Code(e.GetErrorCode()) != codes.NotFound || e.GetErrorMessage() == "" {
			t.Errorf("%v: answered %v, want not found", req, res)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

// Older tools ask v1alpha, the same messages under another name.
func TestReflectionAnswersV1Alpha(t *testing.T) {
	t.Parallel()
	conn := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := reflectionv1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&reflectionv1alpha.ServerReflectionRequest{MessageRequest: &reflectionv1alpha.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "agents.v1.EventService"}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	files := res.GetFileDescriptorResponse().GetFileDescriptorProto()
	if len(files) == 0 {
		t.Fatalf("v1alpha answered %v", res)
	}
	var fd descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(files[0], &fd); err != nil || fd.GetName() != "agents/v1/event.proto" {
		t.Errorf("v1alpha sent %q (%v), want agents/v1/event.proto", fd.GetName(), err)
	}
}

// A request whose message names none of the known requests ends the
// stream with invalid_argument.
func TestReflectionRefusesAnEmptyRequest(t *testing.T) {
	t.Parallel()
	s := stream(t, start(t))
	if err := s.Send(&reflectionv1.ServerReflectionRequest{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); grpcstatus.Code(err) != codes.InvalidArgument {
		t.Errorf("empty request: %v, want invalid_argument", err)
	}
}
