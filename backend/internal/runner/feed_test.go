package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/events"
	llmclient "github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// With Options.Publish and Options.RelayDelta, the committed events go
// through Publish (and only there), and every delta published to the hub
// is handed to RelayDelta too: the hooks a server of several uses to
// share its events.
func TestPublishAndRelayDeltaSeeTheRunsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	llm := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "a streamed answer in several pieces"}})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "feed.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat := catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents"})
	}, catalog.Options{HasKey: func(string) bool { return false }, OfflineModelURL: llm.URL()})
	hub, err := runner.NewHub(ctx, db, events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	sub, _ := hub.Subscribe(events.AllScope(), nil)

	var mu sync.Mutex
	var published []uint64
	var relayed strings.Builder
	r := runner.New(runner.Options{
		Store:   db,
		Hub:     hub,
		Catalog: cat,
		Models:  runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil),
		Publish: func(ev *agentsv1.Event, body []byte) error {
			mu.Lock()
			published = append(published, ev.Seq)
			mu.Unlock()
			_, err := hub.PublishEncoded(ev, body)
			return err
		},
		RelayDelta: func(ev *agentsv1.Event) {
			mu.Lock()
			defer mu.Unlock()
			relayed.WriteString(ev.GetTextDelta().GetText())
		},
	})
	defer r.Close()
	v, err := r.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetSession(ctx, "me", v.Meta.ID, true, 0); err != nil {
		t.Fatal(err)
	}

	var hubDeltas strings.Builder
	var hubLogged []uint64
	for drained := false; !drained; {
		var ev *agentsv1.Event
		select {
		case ev = <-sub.C():
		case <-time.After(100 * time.Millisecond):
			drained = true
			continue
		}
		if ev.DeltaSeq != 0 {
			hubDeltas.WriteString(ev.GetTextDelta().GetText())
		} else {
			hubLogged = append(hubLogged, ev.Seq)
		}
	}
	rows, err := db.EventsAfter(ctx, store.EventFilter{All: true}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) == 0 || len(published) != len(rows) || len(hubLogged) != len(rows) {
		t.Errorf("Publish got %d events and the hub %d; the log has %d", len(published), len(hubLogged), len(rows))
	}
	if hubDeltas.String() == "" || relayed.String() != hubDeltas.String() {
		t.Errorf("RelayDelta got %q; the hub's deltas say %q", relayed.String(), hubDeltas.String())
	}
}
