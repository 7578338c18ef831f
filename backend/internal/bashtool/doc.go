// Package bashtool runs local executables as tools an agent can call.
//
// A tool is any executable that speaks a two-command protocol:
//
//	SCRIPT describe        prints a JSON description of the tool on stdout
//	SCRIPT run ARGS...     performs the call
//
// The protocol is the one of agents-exe, so existing tool scripts work
// unchanged. Describe reads and validates a description; the resulting Tool
// is offered to the model as "bash_<slug>" with a JSON schema built from its
// arguments (Schema). Tool.Run takes the model's arguments as the tool
// package decoded them (each argument's JSON value), checks each against
// its declaration, passes it the way the script declared (a positional word, "--name value",
// "--name=value", a line on stdin or an environment variable) and runs the
// script directly — never through a shell, so the model cannot inject shell
// syntax.
//
// Every run gets a clean environment, never the server's, built in layers,
// each overriding the previous: a few variables of the server's
// environment (PATH, HOME, USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, and the
// names in Tool.PassEnv), env-mode arguments, the caller's extra variables
// (Env.Extra), and finally these reserved ones, which always describe the
// current call and are never inherited from the server:
//
//	AGENT_SESSION_ID    id of the session the call belongs to (same name as agents-exe)
//	AGENT_SLUG          slug of the agent that made the call
//	AGENT_TOOL_CALL_ID  id the model gave this tool call
//
// A run is bounded: a timeout (DefaultTimeout unless Limits says otherwise)
// and a cancelled context both kill the script's whole process group, so
// background children die with it; processes still alive in the group when
// the script exits are killed as well. On Linux the script is also killed
// when the server dies (a parent-death signal), and a Reaper records each
// running group on disk so that KillLeftovers, at the next start, kills
// what a crashed server left behind.
//
// Stdout and stderr are captured up to a cap and a note says how much was
// cut; each stderr line is also handed, while the script runs, to
// Env.OnProgress. Failures the model should see (bad arguments, non-zero
// exit, timeout) come back as a Result with IsError set, never as a Go
// error.
//
// DescribeDir and DescribeFile discover tools for the two toolbox kinds of
// agent files (a directory of executables, a single executable);
// CheckUniqueNames rejects two scripts that would share a tool name.
//
// The protocol for tool authors is documented in docs/bash-tools.md.
package bashtool
