package cli

import (
	"path/filepath"

	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/sqlitetool"
)

// sqliteCopies is where versioned SQLite toolboxes keep their sessions'
// copies: a folder of the data directory, one folder per session in it.
func sqliteCopies(res *config.Resolved) *sqlitetool.Copies {
	return sqlitetool.NewCopies(filepath.Join(res.DataDir, "sqlite-sessions"))
}
