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
	return Describer{Within: within}.Dir(ctx, dir, "")
}

// DescribeDirMatching is DescribeDir restricted to files whose name
// contains basenameFilter (the "basenameFilter" of an agent file's
// directory toolbox; empty keeps every file). Unlike agents-exe, which
// filters after describing, files left out are not run at all, so a broken
// script the filter excludes cannot fail the toolbox.
func DescribeDirMatching(ctx context.Context, dir, basenameFilter string, within ...string) ([]Tool, []error) {
	return Describer{Within: within}.Dir(ctx, dir, basenameFilter)
}

// Dir is DescribeDirMatching with d's confinement.
func (d Describer) Dir(ctx context.Context, dir, basenameFilter string) ([]Tool, []error) {
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
			tool, err := d.Describe(ctx, script)
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
	return Describer{Within: within}.File(ctx, path)
}

// File is DescribeFile with d's confinement.
func (d Describer) File(ctx context.Context, path string) ([]Tool, []error) {
	tool, err := d.Describe(ctx, path)
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
