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
		cfg.EvictWait != time.Minute || cfg.IdleAfter != 0 || cfg.Stored != quick.Stored ||
		!slices.Equal(cfg.Scenarios, []string{"prompts", "idle"}) || !slices.Equal(cfg.ServeArgs, []string{"--max-runs=0"}) {
		t.Errorf("parseFlags = %+v, json %v: want quick sizes with the flags given overriding them", cfg, asJSON)
	}
	full, _, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if def := loadgen.DefaultConfig(); !slices.Equal(full.Concurrency, def.Concurrency) || full.EvictWait != def.EvictWait {
		t.Errorf("parseFlags() = %+v, want the default sizes", full)
	}
	for _, args := range [][]string{
		{"-scenario", "nope"}, {"-prompts", "0"}, {"-concurrency", "1,x"}, {"extra"}, {"-turns", ""},
	} {
		if _, _, err := parseFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseFlags(%q) = %v, want a usage error", args, err)
		}
	}
}
