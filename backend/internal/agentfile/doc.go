// Package agentfile reads agent files and the trees of helper agents they
// declare.
//
// An agent file is JSON in the agents-exe format:
//
//	{"tag": "OpenAIAgentDescription", "contents": {"slug": ..., "flavor": ..., ...}}
//
// Files written for agents-exe load unchanged; the fields this server adds
// (clientTools, mailInToolResult, maxSteps, budget, params, passEnv,
// osTools) live in the same "contents" object. docs/agent-files.md is the
// user-facing reference.
//
// Loading never stops at the first bad file: Load returns every agent that
// loaded, plus one Error per bad file in the form "file: field: reason".
// A Set is read-only once returned and safe for concurrent use.
package agentfile
