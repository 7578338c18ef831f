package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asServerEnv makes this test binary a server of the non-root test (see
// serveAsTest): its value is the test's root folder.
const asServerEnv = "AGENTS_SANDBOX_TEST_SERVER"

// init makes this binary the non-root test's server when started as
// one; as Main does, before any test runs.
func init() {
	if root, ok := os.LookupEnv(asServerEnv); ok {
		serveAsTest(root)
	}
}

// nobody is the user the non-root test's server runs as.
const nobody = 65534

// outcome is what one confined script did, as the non-root server
// reports it.
type outcome struct {
	Out    string `json:"out"`
	Failed bool   `json:"failed"`
}

// serverReport is what the non-root server found.
type serverReport struct {
	Problem    string             `json:"problem,omitempty"`
	Namespaces bool               `json:"namespaces"`
	Why        string             `json:"why,omitempty"`
	Outcomes   map[string]outcome `json:"outcomes"`
}

// serveAsTest is the non-root test's server, when this binary was
// started as one: it confines the scripts the test gives and prints what
// they did. It never returns.
func serveAsTest(root string) {
	report := serverReport{Outcomes: map[string]outcome{}}
	defer func() {
		_ = json.NewEncoder(os.Stdout).Encode(report)
		os.Exit(0)
	}()
	exe, err := os.Executable()
	if err != nil {
		report.Problem = err.Error()
		return
	}
	data := filepath.Join(root, "data")
	sb := New(Options{Launcher: exe, WorkDir: filepath.Join(data, "work"), Protect: []string{data, filepath.Join(data, "agents.db")}})
	if st := sb.Status(); !st.Available {
		report.Problem = st.Problem
		return
	}
	report.Namespaces, report.Why = sb.Namespaces()
	work, err := sb.WorkDir("s1")
	if err != nil {
		report.Problem = err.Error()
		return
	}
	for name, script := range map[string]string{
		"writes in its folder":    `echo made > note && cat note`,
		"reads the database":      `cat "$ROOT/data/agents.db"`,
		"writes outside":          `echo x > "$ROOT/outside/x"`,
		"forks without limit":     `n=0; while [ $n -lt 400 ]; do sleep 30 & n=$((n+1)); done; echo all started`,
		"is root of nothing else": `id -u`,
		"signals the server":      `kill -0 "$SERVER"`,
	} {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = work
		cmd.Env = []string{"PATH=/usr/bin:/bin", "ROOT=" + root, "SERVER=" + fmt.Sprint(os.Getpid())}
		if err := sb.Wrap(cmd, Policy{Write: []string{work}}); err != nil {
			report.Problem = err.Error()
			return
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		report.Outcomes[name] = outcome{Out: out.String(), Failed: err != nil}
	}
}

// TestTheSandboxHoldsForAServerThatIsNotRoot runs a server as nobody (the
// tests run as root here), which confines scripts as a server run by a
// user of its own does: the launcher maps that user into the tool's
// namespaces, and every rule holds.
func TestTheSandboxHoldsForAServerThatIsNotRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to start a server as another user")
	}
	if st := New(Options{Launcher: "agents"}).Status(); !st.Available {
		t.Skipf("the kernel cannot confine here: %s", st.Problem)
	}
	root := t.TempDir()
	// Everything on the way, readable by nobody: only the sandbox may
	// stop the reads.
	for dir := root; dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"bin", "data", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"data", "outside"} {
		if err := os.Chown(filepath.Join(root, dir), nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "data", "agents.db"), []byte("the database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The test binary may lie where nobody cannot reach it: a copy.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(root, "bin", "server")
	if err := copyFile(exe, server); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(server, "-test.run=^$")
	cmd.Env = []string{asServerEnv + "=" + root, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the server as nobody: %v\n%s", err, stderr.String())
	}
	var report serverReport
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("the server's report %q: %v", out, err)
	}
	if report.Problem != "" {
		t.Fatalf("the server as nobody cannot confine: %s", report.Problem)
	}
	got := report.Outcomes
	if o := got["writes in its folder"]; o.Failed || o.Out != "made\n" {
		t.Errorf("a write in the working folder: %+v", o)
	}
	info, err := os.Stat(filepath.Join(root, "data", "work", "s1", "note"))
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Uid != nobody {
		t.Errorf("the tool's file belongs to uid %d outside, want the server's, %d", st.Uid, nobody)
	}
	for _, name := range []string{"reads the database", "writes outside"} {
		if o := got[name]; !o.Failed || !strings.Contains(o.Out, "Permission denied") {
			t.Errorf("%s: %+v, want it stopped", name, o)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "outside", "x")); err == nil {
		t.Error("the tool wrote outside its folders")
	}
	if o := got["signals the server"]; !o.Failed {
		t.Errorf("the tool signalled the server: %+v", o)
	}
	if !report.Namespaces {
		t.Logf("no namespaces for a server that is not root here (%s): Landlock alone", report.Why)
		return
	}
	if o := got["is root of nothing else"]; o.Out != "0\n" {
		t.Errorf("id -u in the tool's namespace = %q, want 0 (the server's user, mapped)", o.Out)
	}
	if o := got["forks without limit"]; strings.Contains(o.Out, "all started") {
		t.Errorf("400 processes started under a server that is not root: %.300q", o.Out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
