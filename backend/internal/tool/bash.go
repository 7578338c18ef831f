package tool

import (
	"context"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/session"
)

// BashRuntime is what the server gives every bash tool run: default
// limits and the record of running process groups.
type BashRuntime struct {
	// Limits bound every run of a script that sets none of its own.
	Limits bashtool.Limits
	// Reaper records the process groups of running scripts, so the next
	// start ends those a crash left behind.
	Reaper *bashtool.Reaper
}

// Bash is a described script offered as a tool.
type Bash struct {
	script  bashtool.Tool
	runtime BashRuntime
}

// NewBash offers a described script.
func NewBash(script bashtool.Tool, runtime BashRuntime) *Bash {
	if script.Limits == (bashtool.Limits{}) {
		script.Limits = runtime.Limits
	}
	return &Bash{script: script, runtime: runtime}
}

// Script is the described script.
func (b *Bash) Script() *bashtool.Tool { return &b.script }

// Spec implements Tool.
func (b *Bash) Spec() Spec {
	return Spec{Name: b.script.Name(), Description: b.script.Description, Parameters: b.script.Schema(), Kind: session.ToolBash, Source: b.script.Path}
}

// Mode implements Tool: the server runs scripts.
func (b *Bash) Mode() session.CallMode { return session.CallAttached }

// Execute runs the script with the call's decoded arguments; its stderr
// lines are the call's progress.
func (b *Bash) Execute(ctx context.Context, call Call) Result {
	out := b.script.Run(ctx, call.Args.Values(), bashtool.Env{
		SessionID:  call.Session.ID,
		AgentSlug:  call.Session.Agent,
		ToolCallID: call.ID,
		Extra:      call.Session.Params,
		OnProgress: call.Progress,
		Reaper:     b.runtime.Reaper,
	})
	if out.IsError {
		return Failed(out.Text)
	}
	return OK(out.Text)
}
