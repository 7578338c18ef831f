package main

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/agents-os/agents/tools/loadgen"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, asJSON, err := parseFlags([]string{"-quick", "-json", "-concurrency", "2,8", "-scenario", "prompts,idle", "-evict-wait", "1m", "-serve-arg", "--max-runs=0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	quick := loadgen.QuickConfig()
	if !asJSON || !slices.Equal(cfg.Concurrency, []int{2, 8}) || !slices.Equal(cfg.Subscribers, quick.Subscribers) ||
		cfg.EvictWait != time.Minute || cfg.IdleAfter != 0 || cfg.Stored != quick.Stored || cfg.IdleMore != quick.IdleMore ||
		!slices.Equal(cfg.Scenarios, []string{"prompts", "idle"}) || !slices.Equal(cfg.ServeArgs, []string{"--max-runs=0"}) {
		t.Errorf("parseFlags = %+v, json %v: want quick sizes with the flags given overriding them", cfg, asJSON)
	}
	full, _, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if def := loadgen.DefaultConfig(); !slices.Equal(full.Concurrency, def.Concurrency) || full.EvictWait != def.EvictWait || full.IdleMore != def.IdleMore {
		t.Errorf("parseFlags() = %+v, want the default sizes", full)
	}
	if quick.IdleMore < 1 || loadgen.DefaultConfig().IdleMore <= quick.IdleMore {
		t.Errorf("second idle wave: %d sessions quick, %d full; want some in both, more in the full run", quick.IdleMore, loadgen.DefaultConfig().IdleMore)
	}
	// -idle-more 0 turns the second wave off, even under -quick.
	if none, _, err := parseFlags([]string{"-quick", "-idle-more", "0"}, io.Discard); err != nil || none.IdleMore != 0 {
		t.Errorf("parseFlags(-quick -idle-more 0) = IdleMore %d, %v; want 0", none.IdleMore, err)
	}
	if more, _, err := parseFlags([]string{"-idle-more", "50"}, io.Discard); err != nil || more.IdleMore != 50 {
		t.Errorf("parseFlags(-idle-more 50) = IdleMore %d, %v; want 50", more.IdleMore, err)
	}
	if cfg.Repeat != quick.Repeat || full.Repeat != loadgen.DefaultConfig().Repeat {
		t.Errorf("repeat: %d quick, %d full; want the defaults", cfg.Repeat, full.Repeat)
	}
	if c, _, err := parseFlags([]string{"-compare", "bin/agents-before"}, io.Discard); err != nil || c.Compare != "bin/agents-before" {
		t.Errorf("parseFlags(-compare bin/agents-before) = Compare %q, %v", c.Compare, err)
	}
	if r, _, err := parseFlags([]string{"-repeat", "5"}, io.Discard); err != nil || r.Repeat != 5 {
		t.Errorf("parseFlags(-repeat 5) = Repeat %d, %v; want 5", r.Repeat, err)
	}
	if paced, _, err := parseFlags([]string{"-quick", "-fanout-rate", "50"}, io.Discard); err != nil || paced.FanoutRate != 50 {
		t.Errorf("parseFlags(-quick -fanout-rate 50) = FanoutRate %v, %v; want 50", paced.FanoutRate, err)
	}
	if k, _, err := parseFlags([]string{"-fanout-kinds", "run.stopped,session.updated"}, io.Discard); err != nil || !slices.Equal(k.FanoutKinds, []string{"run.stopped", "session.updated"}) {
		t.Errorf("parseFlags(-fanout-kinds run.stopped,session.updated) = FanoutKinds %q, %v", k.FanoutKinds, err)
	}
	for _, args := range [][]string{
		{"-scenario", "nope"}, {"-prompts", "0"}, {"-concurrency", "1,x"}, {"extra"}, {"-turns", ""}, {"-idle-more", "-1"}, {"-fanout-rate", "-1"}, {"-repeat", "0"},
		{"-fanout-kinds", "session.updated"},
	} {
		if _, _, err := parseFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseFlags(%q) = %v, want a usage error", args, err)
		}
	}
}
