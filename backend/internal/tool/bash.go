package tool

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/confine"
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
	// Within, when set, are the only folders a script may lie in, judged
	// again at each run (a stored agent's scripts: see confine).
	Within []string
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
	script, workDir := b.script, ""
	if len(b.runtime.Within) > 0 {
		// The script may lead elsewhere since it was described: the real
		// file runs, in the folder it was described in, or nothing does.
		real, err := confine.Program(script.Path, b.runtime.Within)
		if err != nil {
			return Failed(fmt.Sprintf("%s is not run: %v", script.Name(), err))
		}
		script.Path, workDir = real, filepath.Dir(b.script.Path)
	}
	out := script.Run(ctx, call.Args.Values(), bashtool.Env{
		SessionID:  call.Session.ID,
		AgentSlug:  call.Session.Agent,
		ToolCallID: call.ID,
		WorkDir:    workDir,
		Extra:      call.Session.Params,
		OnProgress: call.Progress,
		Reaper:     b.runtime.Reaper,
	})
	if out.IsError {
		return Failed(out.Text)
	}
	return OK(out.Text)
}
