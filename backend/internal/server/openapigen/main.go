// Command openapigen writes openapi.json, the OpenAPI description of the
// server's JSON routes, from the route table and a descriptor set of the
// protos with their comments (buf build -o FILE):
//
//	go run ./backend/internal/server/openapigen -descriptors api.binpb -o backend/internal/server/openapi.json
//
// `make generate` runs it; `make checkgenerate` fails when the committed
// file is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/agents-os/agents/backend/internal/server"
)

func main() {
	descriptors := flag.String("descriptors", "", "descriptor set of the protos, with source info (buf build -o FILE)")
	out := flag.String("o", "", "output file (default stdout)")
	flag.Parse()
	if err := run(*descriptors, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(descriptors, out string) error {
	if descriptors == "" {
		return fmt.Errorf("-descriptors is required")
	}
	data, err := os.ReadFile(descriptors)
	if err != nil {
		return err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("%s: %w", descriptors, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return fmt.Errorf("%s: %w", descriptors, err)
	}
	doc, err := server.OpenAPI(files)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
