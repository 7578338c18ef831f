package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/agents-os/agents/tools/fakellm"
)

// requestLog reports each request on stderr and appends it to the record
// file. Requests may arrive concurrently; the lock keeps lines whole.
type requestLog struct {
	stderr io.Writer
	quiet  bool
	record io.Writer // nil without --record

	mu sync.Mutex
}

func (l *requestLog) request(req fakellm.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.quiet {
		rule := "default reply"
		if req.IsCompaction() {
			rule = "compaction summary"
		}
		if req.Rule >= 0 {
			rule = fmt.Sprintf("rule %d", req.Rule)
			if req.RuleName != "" {
				rule += fmt.Sprintf(" (%q)", req.RuleName)
			}
		}
		if req.ContextExceeded() {
			rule += fmt.Sprintf(": refused, context_length_exceeded (over the %d-token window)", req.ContextWindow)
		}
		fmt.Fprintf(l.stderr, "fakellm: request %d: model %q, %d messages, %d prompt tokens, stream %t: %s\n",
			req.Index, req.Model, len(req.Messages), req.PromptTokens, req.Stream, rule)
	}
	if l.record == nil {
		return
	}
	line, err := json.Marshal(req)
	if err == nil {
		_, err = l.record.Write(append(line, '\n'))
	}
	if err != nil {
		fmt.Fprintf(l.stderr, "fakellm: recording request %d: %v\n", req.Index, err)
	}
}
