package bashtool

import (
	"os"
	"os/exec"
)

// Group is a long-lived program started the way scripts are: the leader
// of its own process group, killed by the kernel when the server dies, and
// recorded with the reaper while it runs, so nothing of it outlives the
// server. MCP servers run this way.
type Group struct {
	cmd    *exec.Cmd
	exited <-chan struct{}
	reaper *Reaper
}

// StartGroup starts cmd (its streams set by the caller) in a group of its
// own. reaper may be nil.
func StartGroup(cmd *exec.Cmd, reaper *Reaper) (*Group, error) {
	startInOwnProcessGroup(cmd)
	exited, err := startAndWait(cmd, reaper.track)
	if err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd, exited: exited, reaper: reaper}
	go func() {
		// Whatever the program left in its group goes with it.
		<-exited
		killProcessGroup(cmd.Process)
		reaper.untrack(cmd.Process.Pid)
	}()
	return g, nil
}

// Exited is closed once the program has exited.
func (g *Group) Exited() <-chan struct{} { return g.exited }

// State is the program's exit state, once Exited is closed.
func (g *Group) State() *os.ProcessState { return g.cmd.ProcessState }

// Kill ends the whole group and waits for the program to exit.
func (g *Group) Kill() {
	killProcessGroup(g.cmd.Process)
	<-g.exited
}

// Environment is the clean environment of a long-lived program: the base
// variables of the server's environment, those pass names, then extra.
func Environment(pass []string, extra map[string]string) ([]string, error) {
	return buildEnvironment(os.Environ(), pass, Env{Extra: extra}, nil)
}
