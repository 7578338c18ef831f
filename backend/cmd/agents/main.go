// Command agents is the agent operating system: `agents serve` runs the
// server; the other subcommands are its clients and tools.
package main

import (
	"context"
	"os"

	"github.com/agents-os/agents/backend/internal/cli"
	"github.com/agents-os/agents/backend/internal/sandbox"
)

func main() {
	// Started as a tool's launcher, the program confines itself and
	// becomes the tool here; nothing of the server has run.
	sandbox.Main()
	os.Exit(cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
