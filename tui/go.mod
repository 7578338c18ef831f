module github.com/agents-os/agents/tui

go 1.26.0
