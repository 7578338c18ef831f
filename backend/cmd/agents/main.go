// Command agents is the agent operating system: `agents serve` runs the
// server; the other subcommands are its clients and tools.
package main

import (
	"context"
	"os"

	"github.com/agents-os/agents/backend/internal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
