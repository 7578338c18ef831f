//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

const napPrompt = "napping agent of the crash test"

func napRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "nap", Match: fakellm.Match{SystemContains: napPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "bash_nap", Arguments: json.RawMessage(`{}`)}},
			}},
			{Name: "woke", Match: fakellm.Match{SystemContains: napPrompt, AssistantMessages: new(1), LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "woke: {{last_tool_result}}",
			}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// TestSIGKILLDuringAToolCallSettlesTheRoundAndLeavesNoToolProcess kills
// the server while a bash tool runs with a background child in its
// process group. The restarted server must end both processes, give the
// call a result saying the server restarted (without running the tool
// again), and finish the run: one user turn, one answer, no call without
// a result, no record of a tool process left.
func TestSIGKILLDuringAToolCallSettlesTheRoundAndLeavesNoToolProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		bin := buildAgents(t)
		model := fakellmtest.Start(t, napRules())
		dir := t.TempDir()
		db := database(t, d, dir)
		pidDir := filepath.Join(dir, "pids")

		first := startServeOn(t, d, bin, dir, db, model.URL())
		id := first.create(t, "napper", "take a nap")

		files := waitPidFiles(t, pidDir, 1)
		pids := readPids(t, files[0])
		tool, bg := mustProc(t, pids[0]), mustProc(t, pids[1])
		t.Cleanup(func() { killStray(t, tool, bg) })
		server := mustProc(t, first.cmd.Process.Pid)
		if bg.pgrp != tool.pgrp || tool.pgrp == server.pgrp {
			t.Fatalf("process groups: tool %d, its background child %d, server %d; want the tool's own group, shared with its child", tool.pgrp, bg.pgrp, server.pgrp)
		}
		if s := first.get(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
			t.Fatalf("status while the tool runs = %v, want running", s.GetMeta().GetStatus())
		}

		first.kill(t)
		// The tool's own process dies with the server (its parent-death
		// signal); its background child is the next server's to end.
		waitGone(t, "the tool after the server's SIGKILL", tool)

		second := startServeOn(t, d, bin, dir, db, model.URL())
		waitGone(t, "tool processes once the server restarted", tool, bg)

		s := second.waitIdle(t, id)
		if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Fatalf("status after restart = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
		}
		checkAnswered(t, s)
		turns := s.GetTurns()
		if len(turns) != 4 {
			t.Fatalf("turns = %d, want 4 (message, call, result, answer):\n%s", len(turns), dumpTurns(s))
		}
		if got := userTexts(s); len(got) != 1 || got[0] != "take a nap" {
			t.Errorf("user messages = %q, want the one posted", got)
		}
		results := turns[2].GetUser().GetToolResults()
		if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED || !strings.Contains(results[0].GetText(), "restarted") {
			t.Fatalf("tool results = %v, want one aborted result saying the server restarted", results)
		}
		// The model read that result (however its wire format labels it).
		if got := turns[3].GetLlm().GetText(); !strings.HasPrefix(got, "woke: ") || !strings.Contains(got, results[0].GetText()) {
			t.Errorf("answer = %q, want it to quote the result %q", got, results[0].GetText())
		}
		reqs := model.Requests()
		if n, m := stepRequests(reqs, napPrompt, 0), stepRequests(reqs, napPrompt, 1); n != 1 || m != 1 {
			t.Errorf("model requests: %d for the first step, %d for the second; want one each", n, m)
		}
		if files := pidFiles(t, pidDir); len(files) != 1 {
			t.Errorf("the tool ran %d times (%v), want once", len(files), files)
		}
		records, err := os.ReadDir(filepath.Join(dir, "data", "agents", "toolpgids"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if len(records) != 0 {
			t.Errorf("tool process records left after the restart: %v", records)
		}
	})
}

// pidFiles lists the files the test tool wrote under dir.
func pidFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files
}

// waitPidFiles waits until the test tool has recorded n runs.
func waitPidFiles(t *testing.T, dir string, n int) []string {
	t.Helper()
	var files []string
	if !eventually.Holds(60*time.Second, func() bool { files = pidFiles(t, dir); return len(files) >= n }) {
		t.Fatalf("the tool recorded %d runs within 60s, want %d", len(files), n)
	}
	return files
}

// readPids reads "<tool pid> <background child pid>".
func readPids(t *testing.T, file string) [2]int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		t.Fatalf("%s: %q, want two pids", file, raw)
	}
	var pids [2]int
	for i, f := range fields {
		if pids[i], err = strconv.Atoi(f); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return pids
}
