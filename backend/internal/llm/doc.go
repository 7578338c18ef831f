// Package llm is the model client: it sends one step of a conversation to an
// OpenAI-compatible chat-completions endpoint (OpenAI, Mistral, Moonshot/Kimi,
// Claude's compatibility layer, Ollama, vLLM, …) and streams the answer back
// as deltas while assembling the final Response.
//
// It is written on net/http, not an SDK: providers differ exactly where SDKs
// hide the wire (reasoning_content vs reasoning, cached tokens in four usage
// fields, a field one provider requires and another rejects), and retries must
// stop the moment output reached the caller, which an SDK's retry loop cannot know.
//
// Provider differences live in one table (dialectFor), chosen by the Flavor
// named in the agent file.
//
// A conversation only grows at its end, so its messages can be written for
// a flavor once (EncodeMessages) and sent with every later request
// (Request.Encoded): a step then costs a copy of the history's bytes, not
// their encoding.
package llm
