// Command mcpfake is the offline MCP server of package mcpfake, on stdio.
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/tools/mcpfake"
)

func main() {
	s := mcpfake.New(mcpfake.Options{Exit: os.Exit})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
