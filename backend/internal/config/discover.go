package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// findConfigFile returns the config file to use, or "" when there is none:
// the --config file if given (it must exist); else the nearest one found
// walking up from the working directory (to stopDir, or to the root); else
// one in the user config directory.
func findConfigFile(flagFile, work, stopDir, userDir string) (string, error) {
	if flagFile != "" {
		path := flagPath(work, flagFile)
		if existingFile(path) == "" {
			return "", fmt.Errorf("--config %s: file does not exist", flagFile)
		}
		return path, nil
	}
	if stopDir != "" {
		stopDir = filepath.Clean(stopDir)
	}
	for dir := work; ; {
		if path := configIn(dir); path != "" {
			return path, nil
		}
		parent := filepath.Dir(dir)
		if dir == stopDir || parent == dir {
			break
		}
		dir = parent
	}
	return configIn(userDir), nil
}

// configIn returns the config file in dir, or "". FileName wins over
// AgentsExeFileName.
func configIn(dir string) string {
	for _, name := range [...]string{FileName, AgentsExeFileName} {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			return path
		}
	}
	return ""
}
