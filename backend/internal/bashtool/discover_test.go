package bashtool

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func toolPaths(tools []Tool) []string {
	paths := make([]string, len(tools))
	for i, t := range tools {
		paths[i] = t.Path
	}
	return paths
}

func TestDescribeDirDescribesOnlyTopLevelExecutables(t *testing.T) {
	tools, errs := DescribeDir(context.Background(), filepath.Join("testdata", "dir"))

	wantPaths := []string{testdataPath(t, "dir/one.sh"), testdataPath(t, "dir/two")}
	if !reflect.DeepEqual(toolPaths(tools), wantPaths) {
		t.Errorf("tools = %q, want %q (no nested, non-executable or JSON files)", toolPaths(tools), wantPaths)
	}
	if len(tools) == 2 && (tools[0].Name() != "bash_one" || tools[1].Name() != "bash_two") {
		t.Errorf("names = %q, %q", tools[0].Name(), tools[1].Name())
	}
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want exactly one, for broken.sh", errs)
	}
	var describeErr *DescribeError
	if !errors.As(errs[0], &describeErr) || describeErr.Script != testdataPath(t, "dir/broken.sh") ||
		!strings.Contains(errs[0].Error(), "exit status 1: cannot describe") {
		t.Errorf("error = %v, want broken.sh's describe failure", errs[0])
	}
}

func TestDescribeDirMatchingSkipsOtherNamesWithoutRunningThem(t *testing.T) {
	tools, errs := DescribeDirMatching(context.Background(), filepath.Join("testdata", "dir"), "one")
	if len(errs) != 0 {
		t.Errorf("errors = %v, want none: broken.sh does not match and must not run", errs)
	}
	if want := []string{testdataPath(t, "dir/one.sh")}; !reflect.DeepEqual(toolPaths(tools), want) {
		t.Errorf("tools = %q, want %q", toolPaths(tools), want)
	}
}

func TestDescribeDirOfMissingDirectory(t *testing.T) {
	tools, errs := DescribeDir(context.Background(), filepath.Join("testdata", "no-such-dir"))
	if len(tools) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "no-such-dir") {
		t.Errorf("DescribeDir = %v, %v; want no tools and one error naming the directory", tools, errs)
	}
}

func TestDescribeFile(t *testing.T) {
	tools, errs := DescribeFile(context.Background(), filepath.Join("testdata", "dir", "one.sh"))
	if len(errs) != 0 || len(tools) != 1 || tools[0].Name() != "bash_one" {
		t.Errorf("DescribeFile(one.sh) = %v, %v", tools, errs)
	}
	tools, errs = DescribeFile(context.Background(), filepath.Join("testdata", "dir", "broken.sh"))
	if len(tools) != 0 || len(errs) != 1 {
		t.Errorf("DescribeFile(broken.sh) = %v, %v; want one error", tools, errs)
	}
}

func TestCheckUniqueNames(t *testing.T) {
	dupTools, errs := DescribeDir(context.Background(), filepath.Join("testdata", "dup"))
	if len(errs) != 0 || len(dupTools) != 2 {
		t.Fatalf("DescribeDir(dup) = %v, %v", dupTools, errs)
	}
	err := CheckUniqueNames(dupTools)
	want := `duplicate tool name "bash_same": ` + testdataPath(t, "dup/a.sh") + " and " + testdataPath(t, "dup/b.sh")
	if err == nil || err.Error() != want {
		t.Errorf("CheckUniqueNames = %v, want %q", err, want)
	}

	distinct, _ := DescribeDir(context.Background(), filepath.Join("testdata", "dir"))
	if err := CheckUniqueNames(append(distinct, dupTools[0])); err != nil {
		t.Errorf("CheckUniqueNames of distinct names = %v, want nil", err)
	}
}
