package runner

import (
	"log/slog"
	"sync"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
)

// LLMModels returns a factory of OpenAI-compatible clients, one per
// endpoint, shared by every session that uses it, within limits. key looks up an API key
// value by id; an agent pointed at the offline model sends no key.
func LLMModels(key func(id string) (string, bool), limits llm.Limits, log *slog.Logger) ModelFactory {
	var mu sync.Mutex
	clients := map[catalog.Model]*llm.Client{}
	return func(m catalog.Model) (Model, error) {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := clients[m]; ok {
			return c, nil
		}
		cfg := llm.Config{BaseURL: m.URL, Logger: log, Limits: limits}
		if flavor, err := llm.ParseFlavor(string(m.Flavor)); err == nil {
			cfg.Flavor = flavor
		}
		if m.APIKeyID != "" && !m.Offline {
			cfg.APIKey, _ = key(m.APIKeyID)
		}
		c, err := llm.New(cfg)
		if err != nil {
			return nil, err
		}
		clients[m] = c
		return c, nil
	}
}
