// Package tokens measures a model request's input tokens before it is sent.
//
// The kernel takes the provider's reported prompt tokens of a session's
// last call as the truth for what was already sent and counts only what
// was added since; a request with no such truth (a session's first call,
// the first after a compaction) is counted whole. Both go through a
// Counter, chosen by the model's name.
//
// OpenAI's model families are counted with their own tokenizer
// (o200k_base or cl100k_base) and OpenAI's documented chat framing. Every
// other model is counted with Estimate, a byte-class estimate made to
// count more tokens than a BPE tokenizer finds, never fewer, on prose,
// code, JSON, command output and CJK text (BENCHMARKS.md, "Measuring a
// request", has the measured bounds).
//
// A tokenizer's vocabulary is a map of 100,000 to 200,000 entries that
// takes about 100 ms to build. It is built once per process, in the
// background, on the first count that needs it; until it is ready, counts
// are estimates, so that no request waits for it.
package tokens
