package config

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
)

// modelSetting is one entry of the config file's "models".
type modelSetting struct {
	ContextWindow   *int64 `json:"context_window"`
	MaxOutputTokens *int64 `json:"max_output_tokens"`
}

// compactionSetting is the config file's "compaction" object.
type compactionSetting struct {
	Threshold     *int64          `json:"threshold"`
	OutputReserve *int64          `json:"output_reserve"`
	Margin        *int64          `json:"margin"`
	PruneOver     *int64          `json:"prune_over"`
	KeepRecent    *int64          `json:"keep_recent"`
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
}

const (
	modelsWanted     = `must map model names to {"context_window", "max_output_tokens"} in tokens`
	compactionWanted = `must be {"threshold", "output_reserve", "margin", "prune_over", "keep_recent", "model", "prompt"}`
)

// readCompaction reads "compaction", the server's compaction settings.
// It comes before readModels, which checks each model's window against
// the room these settings keep.
func (r *fieldReader) readCompaction(s *settings) {
	r.seen["compaction"] = true
	raw, ok := r.fields["compaction"]
	if !ok || r.err != nil {
		return
	}
	var c compactionSetting
	if err := decodeStrict(raw, &c); err != nil {
		r.err = &agentfile.Error{File: r.file, Field: "compaction", Reason: compactionWanted + ": " + err.Error()}
		return
	}
	for _, f := range []struct {
		key   string
		value *int64
		into  *int64
	}{
		{"threshold", c.Threshold, &s.Compaction.Threshold},
		{"output_reserve", c.OutputReserve, &s.Compaction.OutputReserve},
		{"margin", c.Margin, &s.Compaction.Margin},
		{"prune_over", c.PruneOver, &s.Compaction.PruneOver},
		{"keep_recent", c.KeepRecent, &s.Compaction.KeepRecent},
	} {
		if f.value == nil {
			continue
		}
		if *f.value < 0 {
			r.err = &agentfile.Error{File: r.file, Field: "compaction." + f.key, Reason: fmt.Sprintf("must not be negative, got %d", *f.value)}
			return
		}
		*f.into = *f.value
	}
	s.Compaction.Model = strings.TrimSpace(c.Model)
	if len(c.Prompt) > 0 && string(c.Prompt) != "null" {
		lines, err := promptLines(c.Prompt)
		if err != nil {
			r.err = &agentfile.Error{File: r.file, Field: "compaction.prompt", Reason: err.Error()}
			return
		}
		s.Compaction.Prompt = lines
	}
}

// promptLines reads a prompt written one line per entry, or as one
// string, as agent files write theirs.
func promptLines(raw json.RawMessage) ([]string, error) {
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil, fmt.Errorf("must be a list of lines or a string")
		}
		lines = []string{one}
	}
	if strings.TrimSpace(strings.Join(lines, "")) == "" {
		return nil, fmt.Errorf("must not be empty")
	}
	return lines, nil
}

// readModels reads "models", the limits of models the server's table
// lacks or has wrong. Each model's window must leave room beside the
// output reserve and the margin the compaction settings keep for it.
func (r *fieldReader) readModels(s *settings) {
	r.seen["models"] = true
	raw, ok := r.fields["models"]
	if !ok || r.err != nil {
		return
	}
	var models map[string]modelSetting
	if err := decodeStrict(raw, &models); err != nil {
		r.err = &agentfile.Error{File: r.file, Field: "models", Reason: modelsWanted + ": " + err.Error()}
		return
	}
	names := make([]string, 0, len(models))
	for name := range models {
		names = append(names, name)
	}
	sort.Strings(names) // the first problem is the same at every start
	s.Models = make(map[string]catalog.Limits, len(models))
	for _, name := range names {
		l, err := modelLimits(models[name], s.Compaction, name)
		if err != nil {
			r.err = &agentfile.Error{File: r.file, Field: "models." + name, Reason: err.Error()}
			return
		}
		s.Models[name] = l
	}
}

// modelLimits checks one "models" entry and returns its limits, with
// Source LimitsConfig and zero for a field it leaves out.
func modelLimits(m modelSetting, compaction catalog.Compaction, name string) (catalog.Limits, error) {
	if strings.TrimSpace(name) == "" {
		return catalog.Limits{}, fmt.Errorf("a model name must not be empty")
	}
	if m.ContextWindow == nil && m.MaxOutputTokens == nil {
		return catalog.Limits{}, fmt.Errorf("sets neither context_window nor max_output_tokens")
	}
	out := catalog.Limits{Source: catalog.LimitsConfig}
	for _, f := range []struct {
		key   string
		value *int64
		into  *int64
	}{{"context_window", m.ContextWindow, &out.ContextWindow}, {"max_output_tokens", m.MaxOutputTokens, &out.MaxOutputTokens}} {
		if f.value == nil {
			continue
		}
		if *f.value <= 0 {
			return out, fmt.Errorf("%s must be greater than 0, got %d", f.key, *f.value)
		}
		*f.into = *f.value
	}
	if out.ContextWindow != 0 && out.MaxOutputTokens > out.ContextWindow {
		return out, fmt.Errorf("max_output_tokens %d is more than context_window %d, which holds the output too", out.MaxOutputTokens, out.ContextWindow)
	}
	// What an agent that sets none of its own will have.
	l := catalog.ModelLimits(name, out, catalog.Limits{})
	room := catalog.Compaction{OutputReserve: compaction.OutputReserve, Margin: compaction.Margin}.Complete(l)
	if l.ContextWindow <= room.OutputReserve+room.Margin {
		return out, fmt.Errorf("the context window, %d, leaves no room beside the compaction's output reserve, %d, and margin, %d",
			l.ContextWindow, room.OutputReserve, room.Margin)
	}
	return out, nil
}
