package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agents-os/agents/backend/internal/store"
)

// createEmpty writes a new database at path, a copy of the empty database
// of the current schema (store.EmptyDatabase), where no database is yet:
// no file, or an empty one, which SQLite would read as a new database
// too. Making the schema in SQLite was half of a first start's opening of
// the store. The copy is written beside path and renamed onto it once
// synced, so a crash leaves either no database or the whole empty one.
// Open calls it holding the database's lock, so no other process of ours
// makes or opens the database meanwhile.
func createEmpty(path string) error {
	info, err := os.Lstat(path)
	switch {
	case err == nil && (info.Size() > 0 || !info.Mode().IsRegular()):
		return nil // a database, or what SQLite will say is not one
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	empty := store.EmptyDatabase("sqlite")
	if empty == "" {
		return nil
	}
	// A WAL, its index or a journal left without their database belong to
	// no database: SQLite would replay such a WAL into the new file.
	for _, leftover := range []string{path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(leftover); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// CreateTemp makes the file 0600: the sessions are their owners' own.
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // nothing, once renamed
	_, err = tmp.WriteString(empty)
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return fmt.Errorf("write a new database: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
