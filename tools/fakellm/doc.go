// Package fakellm is the project's offline model: an OpenAI-compatible
// chat-completions server whose answers come from a rules file instead of a
// language model.
//
// Every test that needs a model, and the offline demo, talk to it exactly as
// they would talk to a real provider: POST /v1/chat/completions with the
// OpenAI wire format, streaming (server-sent events) or not. Rules decide the
// answer — text, reasoning, tool calls, usage, delays or an HTTP error — from
// what the request contains, so multi-step agent runs are deterministic.
// Every request is recorded for assertions.
//
// For an agent's context management, a context window
// (Rules.ContextWindow, Rule.ContextWindow) makes requests that do not fit
// fail as OpenAI's do, with context_length_exceeded, and compaction
// requests (Request.IsCompaction) get a deterministic, bounded summary
// unless a compaction rule scripts them.
//
// Build a server from Go values with New, or from a file with LoadRules;
// package fakellmtest starts one inside a test. The rules format is
// documented in docs/fakellm.md.
package fakellm
