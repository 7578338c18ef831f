package tool

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"

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

// Describer describes the agent's scripts as the runtime runs them:
// from within its folders, and confined by its policy, with the network
// off and nothing to write in but a scratch folder of its own, its
// TMPDIR, removed after. What its agent allows it to write it may only
// read: a describe prints a description, and changes nothing.
func (r BashRuntime) Describer() bashtool.Describer {
	d := bashtool.Describer{Within: r.Within}
	if r.Policy == nil {
		return d
	}
	p := *r.Policy
	p.Read = slices.Concat(p.Read, p.Write)
	p.Write, p.Network = nil, false
	d.Confine = func(cmd *exec.Cmd) (func(), error) {
		scratch, remove, err := r.Sandbox.Scratch()
		if err != nil {
			return nil, err
		}
		p := p
		p.Read = append(slices.Clone(p.Read), filepath.Dir(cmd.Path))
		p.Write = []string{scratch}
		cmd.Env = append(cmd.Env, "TMPDIR="+scratch)
		if err := r.Sandbox.Wrap(cmd, p); err != nil {
			remove()
			return nil, err
		}
		return remove, nil
	}
	return d
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
			return Failed(out.Text + "\n" + sandbox.Note(script.Name(), policy))
		}
		return Failed(out.Text)
	}
	return OK(out.Text)
}
