// Package systools runs an agent's SystemToolbox: one tool,
// system_<name>_system_info, whose "capability" argument picks what it
// does (the date, the operating system, the user, the host name, the
// working directory, a directory listing, a command's run), each
// capability offered only when the agent file enables it, as agents-exe
// names and shapes them.
//
// A command runs through bashtool.RunCommand, the way every tool
// process of the server starts, so what confines a script's process
// confines it too.
package systools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/dirlist"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// commandTimeout bounds a command's run, as agents-exe does.
const commandTimeout = 30 * time.Second

// Runtime is what the server gives a SystemToolbox.
type Runtime struct {
	// WorkDir is the working directory the toolbox reports, lists from
	// and runs commands in.
	WorkDir string
	// PassEnv names the variables of the server's environment commands
	// get beside the base ones (the agent's passEnv).
	PassEnv []string
	// Reaper records the process groups of running commands.
	Reaper *bashtool.Reaper
	// Sandbox confines the commands when Policy is set, as it confines
	// the agent's bash tools: each runs in its session's working folder,
	// the one it may write in, and may read the working directory too.
	Sandbox *sandbox.Sandbox
	Policy  *sandbox.Policy
}

// New returns a SystemToolbox's tool.
func New(box agentfile.BuiltinToolbox, rt Runtime) tool.Tool {
	return &system{box: box, rt: rt}
}

type system struct {
	box agentfile.BuiltinToolbox
	rt  Runtime
}

func (s *system) has(capability string) bool {
	for _, c := range s.box.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// Spec implements tool.Tool. The arguments of a capability are declared
// only when it is enabled.
func (s *system) Spec() tool.Spec {
	props := map[string]any{
		"capability": map[string]any{"type": "string", "enum": s.box.Capabilities,
			"description": "Capability to query: " + strings.Join(s.box.Capabilities, ", ")},
	}
	if s.has("list-directory") {
		props["path"] = map[string]any{"type": "string", "description": "For list-directory: Directory path to list"}
		props["recursive"] = map[string]any{"type": "boolean", "description": "For list-directory: Include subdirectories recursively (default: false)"}
		props["include_hidden"] = map[string]any{"type": "boolean", "description": "For list-directory: Include hidden files/dotfiles (default: false)"}
		props["order_by"] = map[string]any{"type": "string", "enum": dirlist.Orders(), "description": "For list-directory: Sort order - 'name', 'size', 'mod_time', or 'type' (default: 'name')"}
	}
	if s.has("execute-command") {
		props["command"] = map[string]any{"type": "string", "description": "For execute-command: The shell command to execute"}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"capability"}, "additionalProperties": false})
	return tool.Spec{
		Name:        agentfile.SystemToolPrefix + s.box.Name + agentfile.SystemToolSuffix,
		Description: "Provides system information, file attachment, and directory listing: " + s.box.Description,
		Parameters:  schema,
		Kind:        session.ToolSystem,
		Source:      agentfile.SystemToolboxKind + " " + s.box.Name,
	}
}

// Mode implements tool.Tool.
func (s *system) Mode() session.CallMode { return session.CallAttached }

// Execute implements tool.Tool: the capability's answer, as agents-exe
// shapes it: {"capability", "data", "executionTime"}.
func (s *system) Execute(ctx context.Context, call tool.Call) tool.Result {
	capability := call.Args.String("capability")
	if !s.has(capability) {
		return tool.Failed(fmt.Sprintf("capability %q is not enabled in this toolbox (enabled: %s)", capability, strings.Join(s.box.Capabilities, ", ")))
	}
	started := time.Now()
	var data any
	var err error
	switch capability {
	case "date":
		data = date(time.Now())
	case "operating-system":
		data = operatingSystem()
	case "running-user":
		data, err = runningUser()
	case "hostname":
		var name string
		name, err = os.Hostname()
		data = map[string]string{"hostname": name}
	case "working-directory":
		data = map[string]string{"path": s.rt.WorkDir}
	case "process-info":
		data = map[string]any{"pid": os.Getpid(), "ppid": os.Getppid(), "name": processName()}
	case "uptime":
		data, err = uptime()
	case "list-directory":
		data, err = dirlist.List(s.rt.WorkDir, dirlist.Request{
			Path: call.Args.String("path"), Recursive: call.Args.Bool("recursive"),
			Hidden: call.Args.Bool("include_hidden"), Order: call.Args.String("order_by"),
		}, nil)
	case "execute-command":
		return s.execute(ctx, call, started)
	}
	if err != nil {
		return tool.Failed(fmt.Sprintf("%s: %v", capability, err))
	}
	return answer(capability, data, started)
}

func answer(capability string, data any, started time.Time) tool.Result {
	out, err := json.Marshal(map[string]any{"capability": capability, "data": data, "executionTime": time.Since(started).Seconds()})
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.OK(bashtool.Cut(string(out), bashtool.DefaultMaxStdout))
}

func date(now time.Time) map[string]string {
	zone, _ := now.Zone()
	return map[string]string{
		"utc":            now.UTC().Format("2006-01-02T15:04:05.999999Z"),
		"local":          now.Format("2006-01-02T15:04:05.999999"),
		"timezone":       zone,
		"timezoneOffset": now.Format("-0700"),
	}
}

// operatingSystem reads /etc/os-release and the kernel's release where
// they exist.
func operatingSystem() map[string]string {
	out := map[string]string{"os": runtime.GOOS, "architecture": runtime.GOARCH}
	if data, err := os.ReadFile("/etc/os-release"); err == nil {
		fields := map[string]string{"NAME": "name", "VERSION": "version", "ID": "id", "VERSION_ID": "versionId", "PRETTY_NAME": "prettyName"}
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if key, known := fields[k]; ok && known {
				out[key] = strings.Trim(v, `"'`)
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		out["kernel"] = strings.TrimSpace(string(data))
	}
	return out
}

func runningUser() (map[string]any, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	out := map[string]any{"username": u.Username, "homeDirectory": u.HomeDir}
	if uid, err := strconv.Atoi(u.Uid); err == nil {
		out["uid"] = uid
	}
	if gid, err := strconv.Atoi(u.Gid); err == nil {
		out["gid"] = gid
	}
	if shell := os.Getenv("SHELL"); shell != "" {
		out["shell"] = shell
	}
	return out, nil
}

func processName() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe[strings.LastIndexByte(exe, os.PathSeparator)+1:]
}

func uptime() (map[string]any, error) {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return nil, fmt.Errorf("the system's uptime is not known here: %v", err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	secs, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return nil, err
	}
	return map[string]any{"seconds": secs, "formatted": (time.Duration(secs) * time.Second).String()}, nil
}

// execute runs the call's command, after the toolbox's command filter
// when it has one.
func (s *system) execute(ctx context.Context, call tool.Call, started time.Time) tool.Result {
	command := call.Args.String("command")
	if strings.TrimSpace(command) == "" {
		return tool.Failed(`execute-command: no command given: call with {"capability": "execute-command", "command": "…"}`)
	}
	env := bashtool.Env{SessionID: call.Session.ID, AgentSlug: call.Session.Agent, ToolCallID: call.ID,
		Extra: call.Session.Params, Reaper: s.rt.Reaper}
	dir := s.rt.WorkDir
	if s.rt.Policy != nil {
		work, err := s.rt.Sandbox.WorkDir(call.Session.ID)
		if err != nil {
			return tool.Failed(fmt.Sprintf("execute-command: the command is not run: %v", err))
		}
		policy := *s.rt.Policy
		policy.Read = append(append([]string(nil), policy.Read...), s.rt.WorkDir)
		policy.Write = append(append([]string(nil), policy.Write...), work)
		dir = work
		env.Extra = maps.Clone(env.Extra)
		if env.Extra == nil {
			env.Extra = map[string]string{}
		}
		env.Extra[tool.EnvWorkDir], env.Extra["TMPDIR"] = work, work
		env.Confine = func(cmd *exec.Cmd) error { return s.rt.Sandbox.Wrap(cmd, policy) }
	}
	if s.box.CommandFilter != "" {
		if refusal := s.filter(ctx, command, dir, env); refusal != "" {
			return tool.Failed("execute-command: " + refusal)
		}
	}
	env.OnProgress = call.Progress
	r := bashtool.RunCommand(ctx, bashtool.Command{Line: command, Dir: dir, PassEnv: s.rt.PassEnv,
		Env: env, Limits: bashtool.Limits{Timeout: commandTimeout}})
	if r.Err != nil {
		return tool.Failed(fmt.Sprintf("execute-command: the command %v\n--- stdout ---\n%s\n--- stderr ---\n%s", r.Err, r.Stdout, r.Stderr))
	}
	return answer("execute-command", map[string]any{"command": command, "exitCode": r.ExitCode, "stdout": r.Stdout, "stderr": r.Stderr}, started)
}

// filter asks the command filter about command and returns why it is
// refused, or "" when it is allowed. Anything but a clear answer refuses
// it, as agents-exe does.
func (s *system) filter(ctx context.Context, command, dir string, env bashtool.Env) string {
	r := bashtool.RunCommand(ctx, bashtool.Command{Line: s.box.CommandFilter, Stdin: []byte(command), Dir: dir,
		PassEnv: s.rt.PassEnv, Env: env, Limits: bashtool.Limits{Timeout: commandTimeout}})
	switch {
	case r.Err != nil:
		return fmt.Sprintf("the command filter %v", r.Err)
	case r.ExitCode != 0:
		return fmt.Sprintf("the command filter exited with code %d: %s", r.ExitCode, strings.TrimSpace(r.Stderr))
	}
	var verdict struct {
		Acceptance *string `json:"acceptance"`
		Note       string  `json:"note"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Stdout)))
	if err := dec.Decode(&verdict); err != nil || verdict.Acceptance == nil {
		return fmt.Sprintf("the command filter's output is not {\"acceptance\": \"allowed\"|\"refused\", \"note\": …}: %q", strings.TrimSpace(r.Stdout))
	}
	switch *verdict.Acceptance {
	case "allowed":
		return ""
	case "refused":
		if verdict.Note == "" {
			verdict.Note = "command refused by filter"
		}
		return "refused by the command filter: " + verdict.Note
	}
	return fmt.Sprintf("the command filter answered an unknown acceptance %q", *verdict.Acceptance)
}
