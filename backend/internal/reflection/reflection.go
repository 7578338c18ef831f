// Package reflection serves gRPC server reflection (grpc.reflection.v1
// and v1alpha), so grpcurl, buf curl and Postman find the services and
// their messages without the proto files.
//
// It answers from the registry the generated code already fills
// (protoregistry.GlobalFiles and GlobalTypes) and sends each file as the
// descriptor protoc-gen-go compiled into it. connectrpc.com/grpcreflect
// does the same work but parses its own embedded descriptors and the
// protobuf editions' defaults while the program initialises: 570 KB
// allocated and about 4 ms of CPU on every start of every command, used
// only when someone asks for reflection (BENCHMARKS.md, "Start-up and
// idle memory: the binary's own pages").
package reflection

import (
	"context"
	"errors"
	"io"
	"net/http"

	"connectrpc.com/connect"
)

// The services and their one method, the same on the wire in both
// versions.
const (
	ServiceV1      = "grpc.reflection.v1.ServerReflection"
	ServiceV1Alpha = "grpc.reflection.v1alpha.ServerReflection"
	method         = "ServerReflectionInfo"
)

// Handlers returns the v1 and v1alpha handlers, by the path to mount each
// at, for the services named (fully qualified, as the generated Connect
// code declares them). opts are the services' own handler options
// (interceptors, limits); the codec is reflection's own.
func Handlers(services []string, opts ...connect.HandlerOption) map[string]http.Handler {
	opts = append(opts[:len(opts):len(opts)], connect.WithCodec(codec{}), connect.WithCodec(noJSON{}))
	info := func(ctx context.Context, stream *connect.BidiStream[request, response]) error {
		return serve(stream, services)
	}
	handlers := map[string]http.Handler{}
	for _, svc := range []string{ServiceV1, ServiceV1Alpha} {
		path := "/" + svc + "/"
		handlers[path] = connect.NewBidiStreamHandler(path+method, info, opts...)
	}
	return handlers
}

// serve answers one stream's requests in turn. A file is sent once per
// stream: a later answer that needs it again names it only as the root.
func serve(stream *connect.BidiStream[request, response], services []string) error {
	sent := map[string]bool{}
	for {
		req, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		res := response{host: req.host, original: req.raw, kind: req.kind}
		switch req.kind {
		case listServices:
			res.services = services
		case fileByFilename:
			res.files, res.err = filesByPath(req.name, sent)
		case fileContainingSymbol:
			res.files, res.err = filesBySymbol(req.name, sent)
		case fileContainingExtension:
			res.files, res.err = filesByExtension(req.name, req.number, sent)
		case allExtensionNumbersOfType:
			res.base = req.name
			res.numbers, res.err = extensionNumbers(req.name)
		default:
			return connect.NewError(connect.CodeInvalidArgument, errors.New("the reflection request names no known request"))
		}
		if err := stream.Send(&res); err != nil {
			return err
		}
	}
}
