// Package dirlist lists a directory for the builtin toolboxes'
// list-directory capability: its entries with their type, size and
// modification time, recursively when asked, bounded in number.
package dirlist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MaxEntries bounds one listing, so a model asking for a large tree
// gets a part of it and a note rather than more than it can read.
const MaxEntries = 1000

// Request is one listing asked for.
type Request struct {
	Path      string // "" is the base directory; a relative path is taken from it
	Recursive bool
	Hidden    bool   // include names starting with "."
	Order     string // one of Orders; "" is "name"
}

// Orders are the orders a listing may be sorted in.
func Orders() []string { return []string{"name", "size", "mod_time", "type"} }

// Entry is one file or directory listed.
type Entry struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Type    string `json:"type"` // file, directory, symlink or other
	Size    int64  `json:"size"`
	ModTime string `json:"modTime"`
}

// Listing is a directory's entries, shaped as agents-exe shapes them.
type Listing struct {
	Path       string  `json:"path"`
	Entries    []Entry `json:"entries"`
	EntryCount int     `json:"entryCount"`
	Recursive  bool    `json:"recursive"`
	Truncated  bool    `json:"truncated,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// List lists the directory req names, taken from base when relative.
// keep, when set, says which entries may be shown (by their path); a
// directory not kept is not entered either. Links are listed, never
// followed.
func List(base string, req Request, keep func(path string) bool) (Listing, error) {
	dir := req.Path
	switch {
	case dir == "":
		dir = base
	case !filepath.IsAbs(dir):
		dir = filepath.Join(base, dir)
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Listing{}, fmt.Errorf("directory not found: %s", req.Path)
	case err != nil:
		return Listing{}, err
	case !info.IsDir():
		return Listing{}, fmt.Errorf("not a directory: %s", req.Path)
	}
	order := req.Order
	if order == "" {
		order = "name"
	}
	if !validOrder(order) {
		return Listing{}, fmt.Errorf("unknown order %q (want %s)", order, strings.Join(Orders(), ", "))
	}
	out := Listing{Path: dir, Entries: []Entry{}, Recursive: req.Recursive}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if path == dir {
			return err
		}
		if err != nil {
			return nil // an unreadable folder is left out, not the listing
		}
		hidden := strings.HasPrefix(d.Name(), ".")
		if (hidden && !req.Hidden) || (keep != nil && !keep(path)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if len(out.Entries) == MaxEntries {
			out.Truncated = true
			out.Note = fmt.Sprintf("only the first %d entries are listed; list a smaller directory", MaxEntries)
			return filepath.SkipAll
		}
		out.Entries = append(out.Entries, entryOf(dir, path, d))
		if d.IsDir() && !req.Recursive {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return Listing{}, err
	}
	sortEntries(out.Entries, order)
	out.EntryCount = len(out.Entries)
	return out, nil
}

func validOrder(order string) bool {
	for _, o := range Orders() {
		if o == order {
			return true
		}
	}
	return false
}

func entryOf(dir, path string, d fs.DirEntry) Entry {
	rel, _ := filepath.Rel(dir, path)
	e := Entry{Name: d.Name(), Path: rel, Type: "other"}
	switch t := d.Type(); {
	case t.IsDir():
		e.Type = "directory"
	case t&fs.ModeSymlink != 0:
		e.Type = "symlink"
	case t.IsRegular():
		e.Type = "file"
	}
	if info, err := d.Info(); err == nil {
		e.Size = info.Size()
		e.ModTime = info.ModTime().UTC().Format(time.RFC3339)
	}
	return e
}

func sortEntries(entries []Entry, order string) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		switch order {
		case "size":
			if a.Size != b.Size {
				return a.Size > b.Size
			}
		case "mod_time":
			if a.ModTime != b.ModTime {
				return a.ModTime > b.ModTime
			}
		case "type":
			if a.Type != b.Type {
				return a.Type < b.Type
			}
		}
		return a.Path < b.Path
	})
}
