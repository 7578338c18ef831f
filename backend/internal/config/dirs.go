package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// xdgDir reads an XDG base directory variable. The specification says to
// ignore unset, empty and relative values.
func xdgDir(env func(string) (string, bool), name string) (string, bool) {
	v, ok := env(name)
	if !ok || v == "" || !filepath.IsAbs(v) {
		return "", false
	}
	return filepath.Clean(v), true
}

// userConfigDir is $XDG_CONFIG_HOME/agents, else the platform's user
// config directory plus /agents.
func userConfigDir(env func(string) (string, bool), platform func() (string, error)) (string, error) {
	if dir, ok := xdgDir(env, "XDG_CONFIG_HOME"); ok {
		return filepath.Join(dir, appDirName), nil
	}
	if platform == nil {
		platform = os.UserConfigDir
	}
	dir, err := platform()
	if err != nil {
		return "", fmt.Errorf("user config directory: %w", err)
	}
	return filepath.Join(dir, appDirName), nil
}

// userDataDir is $XDG_DATA_HOME/agents, else ~/.local/share/agents.
func userDataDir(env func(string) (string, bool), home func() (string, error)) (string, error) {
	if dir, ok := xdgDir(env, "XDG_DATA_HOME"); ok {
		return filepath.Join(dir, appDirName), nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("data directory: %w", err)
	}
	return filepath.Join(h, dataHomeSubdir, appDirName), nil
}

// homeDir is $HOME, else what the platform says.
func homeDir(env func(string) (string, bool), platform func() (string, error)) (string, error) {
	if h, ok := env("HOME"); ok && h != "" {
		return h, nil
	}
	if platform == nil {
		platform = os.UserHomeDir
	}
	return platform()
}
