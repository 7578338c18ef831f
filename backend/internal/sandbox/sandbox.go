// Package sandbox confines the processes tools run: bash tools, MCP
// servers over stdio, and whatever later kinds start a program. A
// confined process reads only the system's folders, its own folder and
// what its agent allows, writes only in its session's working folder and
// what its agent allows, reaches the network only when allowed, and runs
// under limits of CPU time, memory, processes and file size.
//
// Go cannot run code between fork and exec, so the server does not
// confine the process itself: Wrap rewrites the command to start this
// program again as a small launcher (see Main), which applies the rules
// to itself and then executes the tool, which inherits them. The rules are
// Landlock's (filesystem, and TCP from Landlock ABI 4), with signals and
// abstract unix sockets scoped to the tool (ABI 6); where the kernel lets
// the server make user namespaces, the tool also gets its own network
// namespace when the network is off (no UDP, no raw sockets either), its
// own PID namespace, whose process limit (Linux 6.14 and later) stops a
// fork bomb whoever the server runs as, and which the kernel empties when
// the tool exits, and its own /proc, which shows no process of the
// server. docs/operations.md ("Tool sandbox") says what this stops and
// what it does not.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Limits bound the resources of one tool process; a zero field takes the
// default below.
type Limits struct {
	// CPUSeconds is the CPU time the process may use (RLIMIT_CPU); 0: no
	// limit but the tool's own timeout.
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// MemoryMB bounds the process's data segment, heap and private
	// mappings (RLIMIT_DATA): unlike the address space, it does not
	// count what runtimes with a JIT reserve without using.
	MemoryMB int64 `json:"memoryMB,omitempty"`
	// Processes bounds the processes and threads the tool may have at
	// once, itself included (the PID limit of its namespace).
	Processes int64 `json:"processes,omitempty"`
	// FileSizeMB is the largest file the process may write (RLIMIT_FSIZE).
	FileSizeMB int64 `json:"fileSizeMB,omitempty"`
}

// Defaults of Limits.
const (
	DefaultMemoryMB   = 4096
	DefaultProcesses  = MinProcesses
	DefaultFileSizeMB = 1024
	// MinProcesses is the fewest processes the kernel lets a PID
	// namespace be limited to (its pid_max may not go below 301).
	MinProcesses = 300
)

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.MemoryMB <= 0 {
		l.MemoryMB = DefaultMemoryMB
	}
	if l.Processes <= 0 {
		l.Processes = DefaultProcesses
	}
	l.Processes = max(l.Processes, MinProcesses)
	if l.FileSizeMB <= 0 {
		l.FileSizeMB = DefaultFileSizeMB
	}
	return l
}

// Policy is what one tool process may do beyond running the system's
// programs and reading their files, which every confined process may.
type Policy struct {
	// Read are folders and files the process may read and execute: the
	// tool's own folder, and those its agent allows.
	Read []string `json:"read,omitempty"`
	// Write are folders and files it may also write, create and remove:
	// its session's working folder, and those its agent allows.
	Write []string `json:"write,omitempty"`
	// Network lets it connect and listen.
	Network bool   `json:"network,omitempty"`
	Limits  Limits `json:"limits"`
}

// systemRead are the folders every confined process reads: programs,
// their libraries and settings, the time zones, the resolver's settings.
// /etc is carved around the server's own files (see carve).
var systemRead = []string{
	"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix/store", "/run/systemd/resolve", "/proc",
}

// systemDevices are the devices every confined process may read and
// write.
var systemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// Sandbox is the server's: whether the kernel can confine, the launcher,
// the files no tool may read, and the folder of the sessions' working
// folders. A nil *Sandbox confines nothing.
type Sandbox struct {
	launcher string
	work     string
	servers  string
	protect  []string
	abi      int
	reason   string // why the sandbox is unavailable; "" when it is not
	system   []string
	ns       *namespaces
}

// Options configure New.
type Options struct {
	// Launcher is a program whose main calls Main first: the server's
	// own executable. Empty: no confinement.
	Launcher string
	// WorkDir holds one working folder per session.
	WorkDir string
	// ServersDir holds one folder per agent and long-lived tool process
	// (an MCP server over stdio): its home, caches and state, which it
	// keeps across sessions and restarts.
	ServersDir string
	// Protect are files and folders no tool may read or write, whatever
	// its agent allows: the server's database, config, keys and tokens.
	// The sessions' folder is one too, but for the session's own folder.
	Protect []string
}

// New detects what the kernel offers. It never fails: a kernel without
// Landlock gives a Sandbox whose Status says so, and Wrap refuses.
func New(opts Options) *Sandbox {
	s := &Sandbox{launcher: opts.Launcher, work: opts.WorkDir, servers: opts.ServersDir, ns: &namespaces{}}
	for _, p := range append(slices.Clone(opts.Protect), opts.WorkDir, opts.ServersDir) {
		if p != "" {
			s.protect = append(s.protect, realPath(p))
		}
	}
	s.abi = landlockABI()
	switch {
	case s.abi <= 0:
		s.reason = "the kernel has no Landlock (Linux 5.13 or later, enabled at boot)"
	case opts.Launcher == "":
		s.reason = "no launcher: this program cannot confine its tools"
	}
	for _, dir := range systemRead {
		s.system = append(s.system, carve(dir, s.protect)...)
	}
	return s
}

// Status says whether tool processes can be confined and how.
type Status struct {
	Available bool
	// LandlockABI is the kernel's Landlock ABI version; 0: none.
	LandlockABI int
	// Problem says why the sandbox is unavailable.
	Problem string
}

// Status reports what the sandbox can do.
func (s *Sandbox) Status() Status {
	if s == nil {
		return Status{Problem: "no sandbox configured"}
	}
	return Status{Available: s.reason == "", LandlockABI: s.abi, Problem: s.reason}
}

// String describes the status in a line, for logs and /readyz.
func (st Status) String() string {
	if !st.Available {
		return "unavailable: " + st.Problem
	}
	return fmt.Sprintf("landlock ABI %d", st.LandlockABI)
}

// ErrUnavailable is Wrap's error when the kernel or the program cannot
// confine.
var ErrUnavailable = errors.New("the tool sandbox is unavailable")

// WorkDir returns the working folder of a session, creating it.
func (s *Sandbox) WorkDir(sessionID string) (string, error) {
	dir, err := s.workDir(sessionID)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("working folder of session %s: %w", sessionID, err)
	}
	return dir, nil
}

// RemoveWorkDir removes the working folder of a session, if it has one.
func (s *Sandbox) RemoveWorkDir(sessionID string) error {
	if s == nil || s.work == "" {
		return nil
	}
	dir, err := s.workDir(sessionID)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

func (s *Sandbox) workDir(sessionID string) (string, error) {
	if s == nil || s.work == "" {
		return "", errors.New("no working folders here")
	}
	if err := checkName(sessionID); err != nil {
		return "", fmt.Errorf("working folder: %w", err)
	}
	return filepath.Join(s.work, sessionID), nil
}

// ServerDir returns the folder of an agent's long-lived tool process (an
// MCP server over stdio), <servers>/<agent>/<name>, without making it:
// what declares the process names its folder before starting it (see
// MakeDir). Each agent has its own, so that no agent's server reads or
// spoils what another's left there.
func (s *Sandbox) ServerDir(agent, name string) (string, error) {
	if s == nil || s.servers == "" {
		return "", errors.New("no folders for tool servers here")
	}
	for _, part := range []string{agent, name} {
		if err := checkName(part); err != nil {
			return "", err
		}
	}
	return filepath.Join(s.servers, agent, name), nil
}

// MakeDir makes a folder WorkDir or ServerDir named, readable by the
// server's user only.
func MakeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tool folder: %w", err)
	}
	return nil
}

// checkName refuses what cannot be one path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("%q cannot name a folder", name)
	}
	return nil
}

// scratchPrefix starts the name of a scratch folder in the sessions'
// folder; no session id starts with it.
const scratchPrefix = ".scratch-"

// Scratch makes a folder for a one-off process that belongs to no
// session (a bash tool's describe), in the sessions' folder, and returns
// it with its removal.
func (s *Sandbox) Scratch() (dir string, remove func(), err error) {
	if s == nil || s.work == "" {
		return "", nil, errors.New("no working folders here")
	}
	if err := os.MkdirAll(s.work, 0o700); err != nil {
		return "", nil, fmt.Errorf("scratch folder: %w", err)
	}
	dir, err = os.MkdirTemp(s.work, scratchPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("scratch folder: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// rules is a policy as the launcher applies it: every path absolute and
// carved around the protected ones, the system's added.
type rules struct {
	Read    []string `json:"read,omitempty"`
	Write   []string `json:"write,omitempty"`
	Files   []string `json:"files,omitempty"` // read and written: devices
	Network bool     `json:"network,omitempty"`
	Limits  Limits   `json:"limits"`
	// Own says the launcher runs in namespaces of its own: it mounts
	// its /proc and sets its PID limit there.
	Own bool `json:"own,omitempty"`
}

// rulesOf resolves p: the system's folders, then p's, each carved around
// the protected paths, but for a session's working folder, which lies
// in the protected data folder and is taken whole.
func (s *Sandbox) rulesOf(p Policy) rules {
	r := rules{Network: p.Network, Limits: p.Limits.WithDefaults(), Files: systemDevices}
	r.Read = slices.Clone(s.system)
	for _, dir := range p.Read {
		r.Read = append(r.Read, s.allowed(dir)...)
	}
	for _, dir := range p.Write {
		r.Write = append(r.Write, s.allowed(dir)...)
	}
	return r
}

// allowed carves one path a tool or its agent names. Inside the
// sessions' folder only a session's own folder (or a scratch folder) is
// allowed, whole; inside the servers' folder only one server's folder.
func (s *Sandbox) allowed(path string) []string {
	real := realPath(path)
	if work := realPath(s.work); s.work != "" && within(real, work) {
		if filepath.Dir(real) != work {
			return nil
		}
		return []string{real}
	}
	if servers := realPath(s.servers); s.servers != "" && within(real, servers) {
		if filepath.Dir(filepath.Dir(real)) != servers {
			return nil
		}
		return []string{real}
	}
	return carve(real, s.protect)
}

// carve returns rules for dir that leave out the protected paths: dir
// itself when none lies inside it, nothing when it lies inside one, and
// otherwise its entries, each carved in turn. Landlock can only allow,
// never deny beneath what it allowed, so a protected file is left out by
// allowing its siblings. An entry that is a link is judged where it
// leads, since the rule follows it.
func carve(dir string, protected []string) []string {
	real := realPath(dir)
	inside := false
	for _, p := range protected {
		if within(real, p) {
			return nil
		}
		if within(p, real) {
			inside = true
		}
	}
	if !inside {
		return []string{dir}
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, carve(filepath.Join(real, e.Name()), protected)...)
	}
	return out
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// realPath is path absolute with its links followed, as far as it
// exists.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	// Not there yet: its folder's real path, and its name.
	if dir := filepath.Dir(abs); dir != abs {
		return filepath.Join(realPath(dir), filepath.Base(abs))
	}
	return abs
}
