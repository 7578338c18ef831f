package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAServerFolderIsAllowedAloneAndWhole(t *testing.T) {
	f := newFixture(t)
	mine, err := f.sb.ServerDir("jailed", "files")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := f.sb.ServerDir("other", "files")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{mine, theirs} {
		if err := MakeDir(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(theirs, "cache"), []byte("theirs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{mine, []string{mine}},
		{filepath.Dir(mine), nil},               // every server of the agent
		{filepath.Dir(filepath.Dir(mine)), nil}, // every server
		{filepath.Join(mine, "sub"), nil},
	} {
		if got := f.sb.allowed(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("allowed(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
	for _, bad := range [][2]string{{"", "x"}, {"a", ".."}, {"a/b", "x"}, {".", "x"}} {
		if _, err := f.sb.ServerDir(bad[0], bad[1]); err == nil {
			t.Errorf("ServerDir(%q, %q) is a folder", bad[0], bad[1])
		}
	}

	p := Policy{Write: []string{mine}}
	out, err := f.runWith(t, "s1", `echo kept > "$MINE/cache" && cat "$MINE/cache"`, p, "MINE="+mine)
	if err != nil || out != "kept\n" {
		t.Errorf("a write in the server's own folder = %q, %v", out, err)
	}
	out, err = f.runWith(t, "s1", `cat "$THEIRS/cache"`, p, "THEIRS="+theirs)
	if err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("another server's folder was read: %q, %v", out, err)
	}
}

func TestAScratchFolderIsWritableAndGoes(t *testing.T) {
	f := newFixture(t)
	dir, remove, err := f.sb.Scratch()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != filepath.Join(f.data, "work") || !strings.HasPrefix(filepath.Base(dir), scratchPrefix) {
		t.Errorf("scratch folder %s, want one in the sessions' folder named %s…", dir, scratchPrefix)
	}
	if got := f.sb.allowed(dir); !slices.Equal(got, []string{dir}) {
		t.Errorf("allowed(scratch) = %v", got)
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the scratch folder is still there: %v", err)
	}
}

func TestTheSweepRemovesTheFoldersOfSessionsThatAreGone(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	old := start.Add(-time.Hour)
	work := filepath.Join(f.data, "work")
	made := map[string]time.Time{"live": old, "gone": old, "new-gone": start.Add(time.Second), scratchPrefix + "x": old}
	for name, mtime := range made {
		dir := filepath.Join(work, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	exists := func(_ context.Context, id string) (bool, error) {
		asked = append(asked, id)
		return id == "live", nil
	}
	sw, err := f.sb.SweepWorkDirs(context.Background(), start, 100, exists)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Removed != 2 || sw.Kept != 2 || sw.More {
		t.Errorf("sweep = %+v, want 2 removed, 2 kept, nothing more", sw)
	}
	for name, want := range map[string]bool{"live": true, "gone": false, "new-gone": true, scratchPrefix + "x": false} {
		_, err := os.Stat(filepath.Join(work, name))
		if got := err == nil; got != want {
			t.Errorf("%s there after the sweep: %v, want %v", name, got, want)
		}
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"gone", "live"}) {
		t.Errorf("asked about %v: want the sessions last changed before the start only", asked)
	}

	sw, err = f.sb.SweepWorkDirs(context.Background(), start, 1, exists)
	if err != nil || !sw.More || sw.Removed+sw.Kept != 1 {
		t.Errorf("a sweep bound to 1 folder = %+v, %v", sw, err)
	}
}
