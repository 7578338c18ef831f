package tool

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/confine"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/session"
)

// EnvWorkDir names the session's working folder in a confined tool's
// environment.
const EnvWorkDir = "AGENT_WORK_DIR"

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
	// Sandbox confines the scripts when Policy is set: what the agent
	// allows them, to which each run adds the script's folder (read) and
	// its session's working folder (read and write), where it runs.
	Sandbox *sandbox.Sandbox
	Policy  *sandbox.Policy
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
	env := bashtool.Env{
		SessionID:  call.Session.ID,
		AgentSlug:  call.Session.Agent,
		ToolCallID: call.ID,
		WorkDir:    workDir,
		Extra:      call.Session.Params,
		OnProgress: call.Progress,
		Reaper:     b.runtime.Reaper,
	}
	var policy sandbox.Policy
	if b.runtime.Policy != nil {
		work, err := b.runtime.Sandbox.WorkDir(call.Session.ID)
		if err != nil {
			return Failed(fmt.Sprintf("%s is not run: %v", script.Name(), err))
		}
		policy = *b.runtime.Policy
		policy.Read = append(append([]string(nil), policy.Read...), filepath.Dir(script.Path))
		policy.Write = append(append([]string(nil), policy.Write...), work)
		// The one folder it may write in is where it runs, and where
		// its temporary files go.
		env.WorkDir = work
		env.Extra = maps.Clone(env.Extra)
		if env.Extra == nil {
			env.Extra = map[string]string{}
		}
		env.Extra[EnvWorkDir], env.Extra["TMPDIR"] = work, work
		env.Confine = func(cmd *exec.Cmd) error { return b.runtime.Sandbox.Wrap(cmd, policy) }
	}
	out := script.Run(ctx, call.Args.Values(), env)
	if out.IsError {
		if b.runtime.Policy != nil {
			return Failed(out.Text + "\n" + confinedNote(script.Name(), policy))
		}
		return Failed(out.Text)
	}
	return OK(out.Text)
}

// confinedNote tells the model, after a confined tool failed, what the
// sandbox allowed it: a denied write or connection then explains itself.
func confinedNote(name string, p sandbox.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s runs in a sandbox: it may write only in %s", name, strings.Join(p.Write, ", "))
	if p.Network {
		b.WriteString("; the network is allowed")
	} else {
		b.WriteString("; the network is off")
	}
	l := p.Limits.WithDefaults()
	fmt.Fprintf(&b, "; at most %d processes, %d MB of memory, files of %d MB", l.Processes, l.MemoryMB, l.FileSizeMB)
	if l.CPUSeconds > 0 {
		fmt.Fprintf(&b, ", %d s of CPU time", l.CPUSeconds)
	}
	b.WriteString("]")
	return b.String()
}
