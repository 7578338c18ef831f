package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// marker is the first argument that makes this program the launcher. It
// is not a command anyone types: Wrap writes it.
const marker = "__agents-sandbox"

// probe is the launcher's argument for a trial of the namespaces.
const probe = "probe"

// Main is the launcher: when this program was started by Wrap, it
// confines itself and executes the tool, and never returns; otherwise it
// returns at once. Call it first thing in main (and in TestMain of a test
// binary that confines), before anything else runs.
func Main() {
	if len(os.Args) < 3 || os.Args[1] != marker {
		return
	}
	if os.Args[2] == probe {
		os.Exit(runProbe())
	}
	err := launch(os.Args[2:])
	// Only a failure comes back: the tool never ran.
	fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
	os.Exit(126)
}

func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// launch applies the rules to this process and executes the tool:
// args are the rules, the program and the tool's argv.
func launch(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("launcher: %d arguments, want rules, program and argv", len(args))
	}
	var r rules
	if err := json.Unmarshal([]byte(args[0]), &r); err != nil {
		return fmt.Errorf("launcher: rules: %w", err)
	}
	if r.Own {
		if err := ownProc(r.Limits.Processes); err != nil {
			return err
		}
	}
	if err := restrict(r); err != nil {
		return err
	}
	// Everything the exec needs is made before the limits: once the
	// memory limit holds, this Go program, which has mapped more than a
	// tool may, could not allocate again.
	program, argv := args[1], args[2:]
	programp, err := syscall.BytePtrFromString(program)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	if err := setLimits(r.Limits); err != nil {
		return err
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE,
		uintptr(unsafe.Pointer(programp)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return fmt.Errorf("%s: %w", program, errno)
}

// ownProc mounts a /proc of the tool's PID namespace, so it sees its own
// processes only, and caps how many it may have at once. The mounts are
// made private first: nothing the launcher mounts reaches the server's
// namespace.
func ownProc(processes int64) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	// pid_max bounds the PIDs of the namespace, so their number: PIDs
	// run from 1 to pid_max-1.
	limit := strconv.FormatInt(max(processes, MinProcesses)+1, 10)
	if err := os.WriteFile("/proc/sys/kernel/pid_max", []byte(limit), 0); err != nil {
		return fmt.Errorf("limit the processes: %w", err)
	}
	return nil
}

// restrict applies the Landlock rules. The configuration is ABI 7's, best
// effort: an older kernel enforces what it knows (TCP from ABI 4, the
// scoping of signals and abstract sockets from ABI 6).
func restrict(r rules) error {
	cfg := landlock.V7.BestEffort()
	if r.Network {
		cfg.HandledAccessNet = 0
	}
	var roDirs, roFiles, rwDirs, rwFiles []string
	sort := func(paths []string, dirs, files *[]string) {
		for _, p := range paths {
			info, err := os.Stat(p)
			switch {
			case err != nil:
				// Gone since the rules were made, or never there (a
				// system folder this system lacks).
			case info.IsDir():
				*dirs = append(*dirs, p)
			default:
				*files = append(*files, p)
			}
		}
	}
	sort(r.Read, &roDirs, &roFiles)
	sort(r.Write, &rwDirs, &rwFiles)
	sort(r.Files, &rwFiles, &rwFiles)
	err := cfg.Restrict(
		landlock.RODirs(roDirs...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		landlock.RWDirs(rwDirs...).IgnoreIfMissing(),
		landlock.RWFiles(rwFiles...).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// setLimits sets the resource limits the tool inherits. The CPU limit's
// hard bound is a second above the soft one, so the tool gets SIGXCPU
// first, then SIGKILL.
func setLimits(l Limits) error {
	const mb = 1 << 20
	set := func(name string, resource int, soft, hard uint64) error {
		if err := unix.Setrlimit(resource, &unix.Rlimit{Cur: soft, Max: hard}); err != nil {
			return fmt.Errorf("limit %s: %w", name, err)
		}
		return nil
	}
	for _, lim := range []struct {
		name     string
		resource int
		n, unit  int64
		grace    uint64
	}{
		{"CPU time", unix.RLIMIT_CPU, l.CPUSeconds, 1, 1},
		{"memory", unix.RLIMIT_DATA, l.MemoryMB, mb, 0},
		{"file size", unix.RLIMIT_FSIZE, l.FileSizeMB, mb, 0},
	} {
		if lim.n <= 0 {
			continue // no limit
		}
		soft := uint64(lim.n) * uint64(lim.unit)
		if err := set(lim.name, lim.resource, soft, soft+lim.grace); err != nil {
			return err
		}
	}
	return nil
}

// runProbe is the launcher's trial of its namespaces: it exits 0 when it
// could make its /proc and cap its processes.
func runProbe() int {
	if err := ownProc(MinProcesses); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// namespaces remembers whether the tools can have namespaces of their
// own: a user namespace (so the rest need no privilege), and in it a
// mount, a PID and, when the network is off, a network namespace. A
// service manager may forbid them (systemd's RestrictNamespaces=), a
// container may too, and a kernel before 6.14 has no PID limit per
// namespace: it is tried once, and without them the tools are confined
// by Landlock and the resource limits alone.
type namespaces struct {
	once    sync.Once
	ok      bool
	problem string
}

func (n *namespaces) usable(launcher string) (bool, string) {
	n.once.Do(func() {
		cmd := exec.Command(launcher, marker, probe)
		cmd.Args[0] = "agents-sandbox"
		cmd.Env = []string{}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		ownNamespaces(cmd.SysProcAttr, false)
		if err := cmd.Run(); err != nil {
			n.problem = fmt.Sprintf("no namespaces of their own for tools (%v%s): network off is TCP only, no process limit",
				err, trimmed(stderr.String()))
			return
		}
		n.ok = true
	})
	return n.ok, n.problem
}

func trimmed(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if s == "" {
		return ""
	}
	return ": " + s
}

// ownNamespaces asks for a user namespace in which the tool is root (of
// nothing outside it: its user is the server's outside), and in it a
// mount and a PID namespace, and a network namespace unless network.
func ownNamespaces(attr *syscall.SysProcAttr, network bool) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	if !network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// Wrap rewrites cmd, built by exec.Command and not started, so that it
// runs confined by p: its program becomes the launcher, which executes
// the tool once confined. The tool keeps cmd's environment, folder and
// streams. Set the rest of cmd.SysProcAttr (a process group) after or
// before, but keep what Wrap sets.
func (s *Sandbox) Wrap(cmd *exec.Cmd, p Policy) error {
	if st := s.Status(); !st.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Problem)
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	r := s.rulesOf(p)
	r.Own, _ = s.ns.usable(s.launcher)
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	program := cmd.Path
	cmd.Path = s.launcher
	cmd.Args = append([]string{"agents-sandbox", marker, string(data), program}, cmd.Args...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if r.Own {
		ownNamespaces(cmd.SysProcAttr, p.Network)
	}
	return nil
}

// Namespaces reports whether tools get namespaces of their own, and if
// not, why; the first call tries them.
func (s *Sandbox) Namespaces() (bool, string) {
	if st := s.Status(); !st.Available {
		return false, st.Problem
	}
	return s.ns.usable(s.launcher)
}
