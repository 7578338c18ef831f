package bashtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agents-os/agents/backend/internal/confine"
)

// describeConcurrency bounds the scripts described at once by DescribeDir.
const describeConcurrency = 8

// DescribeDir describes the tools of a directory toolbox: every entry of dir
// (not of its subdirectories) that is, after following symlinks, a regular
// file with an execute bit. Anything else — subdirectories, data files,
// agent *.json files — is skipped because it is not executable, exactly as
// agents-exe does; there is no skipping by name.
//
// Scripts are described concurrently. A script that fails does not stop the
// others: the tools that loaded come back sorted by path, with one error
// (a *DescribeError) per script that did not. An unreadable directory is a
// single error and no tools. With within (a stored agent's folders), a
// script that does not really lie under one of them is such an error,
// and is not run.
func DescribeDir(ctx context.Context, dir string, within ...string) ([]Tool, []error) {
	return DescribeDirMatching(ctx, dir, "", within...)
}

// DescribeDirMatching is DescribeDir restricted to files whose name
// contains basenameFilter (the "basenameFilter" of an agent file's
// directory toolbox; empty keeps every file). Unlike agents-exe, which
// filters after describing, files left out are not run at all, so a broken
// script the filter excludes cannot fail the toolbox.
func DescribeDirMatching(ctx context.Context, dir, basenameFilter string, within ...string) ([]Tool, []error) {
	scripts, err := executablesIn(dir, basenameFilter)
	if err != nil {
		return nil, []error{err}
	}

	tools := make([]*Tool, len(scripts))
	errs := make([]error, len(scripts))
	slots := make(chan struct{}, describeConcurrency)
	var wg sync.WaitGroup
	for i, script := range scripts {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			tool, err := describeWithin(ctx, script, within)
			if err != nil {
				errs[i] = err
				return
			}
			tools[i] = &tool
		})
	}
	wg.Wait()

	var described []Tool
	for _, t := range tools {
		if t != nil {
			described = append(described, *t)
		}
	}
	return described, slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// DescribeFile describes the tool of a single-file toolbox, returning the
// same shapes as DescribeDir so both toolbox kinds load alike.
func DescribeFile(ctx context.Context, path string, within ...string) ([]Tool, []error) {
	tool, err := describeWithin(ctx, path, within)
	if err != nil {
		return nil, []error{err}
	}
	return []Tool{tool}, nil
}

// executablesIn lists the candidate scripts of a directory, sorted by name.
func executablesIn(dir, basenameFilter string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("tool directory: %w", err)
	}
	var scripts []string
	for _, entry := range entries {
		if !strings.Contains(entry.Name(), basenameFilter) {
			continue
		}
		path := filepath.Join(abs, entry.Name())
		info, err := os.Stat(path) // follows symlinks
		if err != nil || !info.Mode().IsRegular() || !isExecutable(info) {
			continue
		}
		scripts = append(scripts, path)
	}
	return scripts, nil
}

// CheckUniqueNames reports every tool name shared by two or more scripts
// of one agent; the model could not tell them apart.
func CheckUniqueNames(tools []Tool) error {
	byName := map[string][]string{}
	var order []string
	for _, t := range tools {
		name := t.Name()
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], t.Path)
	}
	var errs []error
	for _, name := range order {
		if paths := byName[name]; len(paths) > 1 {
			errs = append(errs, fmt.Errorf("duplicate tool name %q: %s", name, strings.Join(paths, " and ")))
		}
	}
	return errors.Join(errs...)
}

// describeWithin describes a script; with within set (a stored agent's
// scripts), only one that really lies under those folders, and from its
// real path, so that no link leads the describe run elsewhere.
func describeWithin(ctx context.Context, script string, within []string) (Tool, error) {
	if len(within) == 0 {
		return Describe(ctx, script)
	}
	real, err := confine.Program(script, within)
	if err != nil {
		return Tool{}, &DescribeError{Script: script, Err: err}
	}
	return Describe(ctx, real)
}
