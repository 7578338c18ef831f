package agentfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// jsonFiles lists the *.json files directly inside dir, sorted by name.
func jsonFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("directory does not exist")
		}
		return nil, fmt.Errorf("cannot list directory: %s", readReason(err))
	}
	var files []string
	for _, entry := range entries {
		if filepath.Ext(entry.Name()) != ".json" {
			continue
		}
		path := filepath.Join(dir, entry.Name())
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			files = append(files, path)
		}
	}
	sort.Strings(files)
	return files, nil
}

func absolute(base, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(base, path)
}

// displayPath shows path relative to the working directory when it is
// inside it, which keeps messages short; otherwise absolute.
func displayPath(work, path string) string {
	rel, err := filepath.Rel(work, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}
