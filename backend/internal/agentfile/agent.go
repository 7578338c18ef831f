package agentfile

import (
	"encoding/json"
	"math"

	"github.com/agents-os/agents/backend/internal/session"
)

// MaxStepsLimit is the most maxSteps may be: the API carries an agent's
// and a run's max steps as 32-bit integers, and more would read back
// wrapped around.
const MaxStepsLimit = math.MaxInt32

// Agent is one loaded agent, a root or a helper. Paths are absolute.
// Treat it as read-only: a Set shares its agents between callers.
type Agent struct {
	Slug      string
	Flavor    Flavor
	ModelURL  string
	APIKeyID  string // "" when the model needs no key
	ModelName string
	Announce  string

	SystemPrompt []string // one entry per line, as written in the file

	ToolDirectory string // "" if none
	BashToolboxes []BashToolbox
	MCPServers    []MCPServer
	// BuiltinToolboxes are tools the server runs itself: SQLite
	// databases, system information, file editing.
	BuiltinToolboxes []BuiltinToolbox

	// SkillSources are the folders of the agent's Agent Skills, and
	// AutoEnableSkills the skills active from a session's start (see
	// skills.go).
	SkillSources     []SkillSource
	AutoEnableSkills []string

	// APIToolboxes are the HTTP APIs whose operations are tools
	// (openApiToolboxes, then postgrestToolboxes).
	APIToolboxes []APIToolbox

	// Extensions of this server to the agents-exe format.
	ClientTools      []ClientTool
	MailInToolResult bool
	MaxSteps         int // 0: the runner's default; at most MaxStepsLimit
	Params           []Param
	// PassEnv names variables of the server's environment the agent's bash
	// tools get too, when set; tools otherwise start from a clean
	// environment.
	PassEnv []string
	// Approvals are the tools whose calls may wait for a person's
	// approval, one policy per tool; every other tool never asks.
	Approvals []Approval
	// Budget is the budget of the session tree a root session of the
	// agent starts with when its client sets none; nil: none.
	Budget *session.Budget

	// Sandbox is how the agent's tool processes are confined.
	Sandbox Sandbox

	// OSTools names the operating system tools the agent is offered
	// (OSToolNames, in that order); none unless the file opts in.
	OSTools []string

	// ContextWindow and MaxOutputTokens, when set, are the limits of the
	// agent's model, over the config's and the server's; 0: not set.
	ContextWindow   int64
	MaxOutputTokens int64
	// Compaction is how the agent's sessions are compacted, over the
	// server's settings field by field.
	Compaction Compaction

	// Helpers are the slugs of the direct helper agents, in declaration
	// order: agent files found in ToolDirectory and in FileSystemDirectory
	// toolboxes, then extraAgents. Helpers may form cycles, and an agent may
	// list itself (a recursive agent): walk them with a visited set.
	Helpers []string
	// HelperTools are the tools that offer the helpers to the model, one
	// per tool name, in the order of Helpers: a helper may be offered
	// under several names, each narrowed its own way.
	HelperTools []HelperTool

	File string // absolute path of the agent file
	// Shown is File as messages show it: relative to the working
	// directory when inside it. The problems found later, as the tools
	// are built, name the file as the loader's own do.
	Shown  string
	Parent string // slug of the agent that first declared it as a helper; "" for roots

	// Warnings are the problems found in the agent's file that did not
	// stop it from loading (an unknown field, one of the agents-exe format
	// this server does not implement, a tool path that does not exist).
	Warnings []*Error
}

// Model is what a model client needs to reach an agent's model.
type Model struct {
	Flavor   Flavor
	BaseURL  string
	Name     string
	APIKeyID string
}

// Model returns the agent's model settings.
func (a *Agent) Model() Model {
	return Model{Flavor: a.Flavor, BaseURL: a.ModelURL, Name: a.ModelName, APIKeyID: a.APIKeyID}
}

// BashToolboxKind is the tag of a bashToolboxes entry.
type BashToolboxKind string

// The bash toolbox kinds agent files may declare.
const (
	// FileSystemDirectory: every executable in a directory is a tool.
	FileSystemDirectory BashToolboxKind = "FileSystemDirectory"
	// SingleTool: one executable is a tool.
	SingleTool BashToolboxKind = "SingleTool"
)

// BashToolbox is a source of bash tools (programs following the
// "describe" / "run" protocol).
type BashToolbox struct {
	Kind BashToolboxKind
	Path string // absolute: the directory, or the single executable
	// BasenameFilter, for FileSystemDirectory only: load only executables
	// whose file name contains this text ("" loads all).
	BasenameFilter string
	// Toolgroup, when set, is the group of an on-demand toolbox: its
	// tools are offered while a session has the group active (see
	// activation.go).
	Toolgroup string
}

// The MCP server kinds agent files declare.
const (
	// MCPKindSimpleBinary is a program started with arguments, speaking
	// MCP on its stdin and stdout (the agents-exe form).
	MCPKindSimpleBinary = "McpSimpleBinary"
	// MCPKindStreamableHTTP is a server reached over MCP's streamable
	// HTTP transport.
	MCPKindStreamableHTTP = "McpStreamableHttp"
)

// MCPServer is an MCP server an agent uses for tools.
type MCPServer struct {
	Kind string // MCPKindSimpleBinary or MCPKindStreamableHTTP
	Name string

	// For MCPKindSimpleBinary.
	Executable string // as written: a name looked up in PATH, or a path
	Args       []string
	// Env is set for the program on top of the clean environment tools
	// get (see PassEnv).
	Env map[string]string

	// For MCPKindStreamableHTTP.
	URL string
	// Headers are sent with every request; values may name session
	// params as {{param:NAME}} (see ExpandParams).
	Headers map[string]string

	// Toolgroup, when set, is the group of an on-demand server, as for
	// a bash toolbox.
	Toolgroup string
}

// ClientTool is a tool the server does not run: calls to it are deferred to
// a client, which answers them (see the runner's deferred calls).
type ClientTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object describing the arguments
}

// Compaction is an agent's "compaction" object. Zero fields are not set:
// the server's settings apply.
type Compaction struct {
	Threshold     int64 // the measured input above which a request is compacted first
	OutputReserve int64 // room kept for the answer
	Margin        int64 // room kept for the measure's error
	PruneOver     int64 // older tool results longer than this many tokens are pruned first
	KeepRecent    int64 // tokens of the newest turns a summary keeps whole
	Model         string
	Prompt        []string // one entry per line
}

// Param is a value the agent needs from whoever starts a session, such as a
// per-user token. Secret values are never stored or returned.
type Param struct {
	Name        string
	Description string
	Secret      bool
	Required    bool
}

// HelperTool is one tool offering a helper agent, prompt_agent_<Name>,
// narrowed as its extraAgents entry says ("as", "with", "bindings").
type HelperTool struct {
	Slug string // the helper agent
	Name string // the slug, or the entry's "as"
	// With are lines added to the system prompt of every child the tool
	// starts, after the helper's own.
	With []string
	// Bindings are fixed arguments: "prompt" (then the model gives none)
	// and params of the helper, set for the child over the caller's.
	Bindings map[string]string
}

// Narrowed reports whether the tool is more than the plain helper.
func (h HelperTool) Narrowed() bool {
	return h.Name != h.Slug || len(h.With) > 0 || len(h.Bindings) > 0
}

// PromptBinding is the bindings key that fixes a helper's prompt.
const PromptBinding = "prompt"

// OSToolNames returns the operating system tools an agent file may ask
// for in "osTools", in the order they are offered.
func OSToolNames() []string {
	return []string{"send_mail", "spawn_session", "watch_session", "list_sub_sessions", "read_session"}
}
