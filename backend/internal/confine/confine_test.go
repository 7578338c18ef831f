package confine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRealFollowsLinksWhereTheKernelWould(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"in", "out/sub"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in/dangling": filepath.Join(root, "out", "later"),
		"in/escape":   "../out/sub",
		"in/loop":     "loop",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"in/prog", "in/prog"},
		{"in/new/prog", "in/new/prog"},
		{"in/dangling", "out/later"},
		{"in/escape/prog", "out/sub/prog"},
		{"in/escape/../prog", "out/prog"},
		{"in/escape/new/../../prog", "out/prog"},
	} {
		// Joined by hand: filepath.Join would clean the ".." away.
		got, err := Real(root + "/" + tc.path)
		if err != nil || got != filepath.Join(root, tc.want) {
			t.Errorf("Real(%s) = %q, %v, want %s", tc.path, got, err, tc.want)
		}
	}
	if _, err := Real(filepath.Join(root, "in/loop")); err == nil {
		t.Error("Real of a loop of links answered")
	}
	if why := Outside(root+"/in/escape/../prog", []string{filepath.Join(root, "in")}); why == "" {
		t.Error("a path through a link out is inside")
	}
}
