package sandbox

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain makes this test binary the launcher too, as main does for the
// server's.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

// fixture is a server's layout: a data folder with a database and the
// sessions' folders, a config folder with keys, and a tool folder.
type fixture struct {
	sb                      *Sandbox
	data, db, keys, toolDir string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{
		data:    filepath.Join(root, "data"),
		db:      filepath.Join(root, "data", "agents.db"),
		keys:    filepath.Join(root, "config", "keys.json"),
		toolDir: filepath.Join(root, "tools"),
	}
	for _, dir := range []string{f.data, filepath.Dir(f.keys), f.toolDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{f.db, f.keys, filepath.Join(f.toolDir, "data.txt")} {
		if err := os.WriteFile(file, []byte("secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f.sb = New(Options{Launcher: exe, WorkDir: filepath.Join(f.data, "work"), ServersDir: filepath.Join(f.data, "mcp"), Protect: []string{f.data, f.db, filepath.Dir(f.keys)}})
	if st := f.sb.Status(); !st.Available {
		t.Skipf("the kernel cannot confine here: %s", st.Problem)
	}
	return f
}

// run runs a shell script confined by the policy of a tool in f.toolDir
// working in session's folder, and returns its output and error.
func (f fixture) run(t *testing.T, session, script string, p Policy) (string, error) {
	t.Helper()
	return f.runWith(t, session, script, p)
}

// runWith is run with more variables in the script's environment.
func (f fixture) runWith(t *testing.T, session, script string, p Policy, env ...string) (string, error) {
	t.Helper()
	work, err := f.sb.WorkDir(session)
	if err != nil {
		t.Fatal(err)
	}
	p.Read = append(p.Read, f.toolDir)
	p.Write = append(p.Write, work)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = work
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "TOOLS=" + f.toolDir, "DATA=" + f.data, "DB=" + f.db, "KEYS=" + f.keys}, env...)
	if err := f.sb.Wrap(cmd, p); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func TestAConfinedToolWorksInItsFolders(t *testing.T) {
	f := newFixture(t)
	out, err := f.run(t, "s1", `echo made > note && cat note && cat "$TOOLS/data.txt" && ls /usr/bin/env && date +%Y >/dev/null`, Policy{})
	if err != nil {
		t.Fatalf("a tool that stays in its folders failed: %v\n%s", err, out)
	}
	if out != "made\nsecret\n/usr/bin/env\n" {
		t.Errorf("output %q", out)
	}
}

func TestAConfinedToolIsStopped(t *testing.T) {
	f := newFixture(t)
	if _, err := f.run(t, "other", `echo theirs > mine`, Policy{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, script string }{
		{"writes outside its folder", `echo x > "$TOOLS/written"`},
		{"writes in /tmp", `echo x > /tmp/sandbox-escape-$$`},
		{"reads another session's folder", `cat "$DATA/work/other/mine"`},
		{"reads the database", `cat "$DB"`},
		{"reads the keys", `cat "$KEYS"`},
		{"lists the data folder", `ls "$DATA"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.run(t, "s1", tc.script, Policy{})
			if err == nil {
				t.Fatalf("the tool was not stopped: %q", out)
			}
			if !strings.Contains(out, "Permission denied") {
				t.Errorf("output %q does not say the permission was denied", out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.toolDir, "written")); err == nil {
		t.Error("the tool wrote in its own folder")
	}
}

func TestTheNetworkIsOffUnlessAllowed(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// bash's /dev/tcp needs no client program.
	script := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + " && head -n1 <&3"
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	connect := func(p Policy) (string, error) { return f.run(t, "s1", "bash -c '"+script+"'", p) }
	if out, err := connect(Policy{}); err == nil {
		t.Errorf("a tool without network connected: %q", out)
	}
	out, err := connect(Policy{Network: true})
	if err != nil || out != "hello\n" {
		t.Errorf("a tool allowed the network: %q, %v", out, err)
	}
}

func TestAForkBombIsStopped(t *testing.T) {
	f := newFixture(t)
	if ok, why := f.sb.Namespaces(); !ok {
		t.Skipf("no process limit here: %s", why)
	}
	// 400 sleepers, more than the fewest processes a tool may be given;
	// the shell says when it cannot make one.
	script := `n=0; while [ $n -lt 400 ]; do sleep 30 & n=$((n+1)); done; echo all started`
	out, err := f.run(t, "s1", script, Policy{})
	if err == nil && strings.Contains(out, "all started") {
		t.Fatalf("400 processes started: %q", out)
	}
	if !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") && !strings.Contains(out, "Cannot fork") {
		t.Errorf("output %q does not say a fork failed", out)
	}
}

func TestCarveLeavesOutTheProtected(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"etc/agents", "etc/ssl", "etc/a/b"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "etc/agents"), filepath.Join(root, "etc/link")); err != nil {
		t.Fatal(err)
	}
	got := carve(filepath.Join(root, "etc"), []string{filepath.Join(root, "etc/agents")})
	want := []string{filepath.Join(root, "etc/a"), filepath.Join(root, "etc/ssl")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("carve = %v, want %v", got, want)
	}
	if got := carve(filepath.Join(root, "etc/agents"), []string{filepath.Join(root, "etc")}); len(got) != 0 {
		t.Errorf("a folder inside a protected one is allowed: %v", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
