package loadgen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ServeOptions say how to run one `agents serve`.
type ServeOptions struct {
	Bin       string   // the agents binary
	Dir       string   // working directory; home and XDG directories go under it
	DB        string   // the SQLite file
	ModelURL  string   // the offline model's base URL (…/v1)
	AgentFile string   // the agent file to serve
	Args      []string // more flags for `agents serve`
	// Profile, when set, serves the server's profiles (AGENTS_PPROF=1);
	// each measured workload's CPU profile is written to this file.
	Profile string
	// FineHeap, with Profile, samples the heap every 4 KiB
	// (AGENTS_PPROF=heap) for heap profiles that count small objects; it
	// makes the CPU profile overstate allocations.
	FineHeap bool
}

// startTimeout bounds how long a server may take to log `listening`.
const startTimeout = 2 * time.Minute

// Server is a running `agents serve` process.
type Server struct {
	URL string // base URL, such as http://127.0.0.1:40123
	Pid int
	DB  string // the SQLite file it serves
	// Startup is the time from exec to the `listening` log line.
	Startup time.Duration
	// Ready is the time from exec to the first 200 from /readyz.
	Ready time.Duration

	profile       string   // where a measured workload's CPU profile goes
	clientProfile *os.File // this process's profile of the same workload
	allocsBefore  []byte   // the server's allocations profile as the workload began

	cmd    *exec.Cmd
	logs   *serverLog
	exited chan struct{}
}

// StartServer runs `agents serve --port 0` and waits for its `listening`
// log line, which carries the address.
func StartServer(o ServeOptions) (*Server, error) {
	args := append([]string{"serve",
		"--port", "0",
		"--db", o.DB,
		"--offline-model", o.ModelURL,
		"--agent-file", o.AgentFile,
		"--log-format", "json",
		"--shutdown-grace", "2s",
	}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	cmd.Dir = o.Dir
	cmd.Env = serverEnv(o.Dir)
	switch {
	case o.Profile != "" && o.FineHeap:
		cmd.Env = append(cmd.Env, "AGENTS_PPROF=heap")
	case o.Profile != "":
		cmd.Env = append(cmd.Env, "AGENTS_PPROF=1")
	}
	logs := &serverLog{listening: make(chan string, 1)}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // one pipe, read by one goroutine
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Bin, err)
	}
	s := &Server{Pid: cmd.Process.Pid, DB: o.DB, profile: o.Profile, cmd: cmd, logs: logs, exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		logs.read(out)
		close(read)
	}()
	go func() {
		<-read // Wait closes the pipe: read it all first
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.URL = <-logs.listening:
		s.Startup = time.Since(begin)
	case <-s.exited:
		return nil, fmt.Errorf("agents serve exited before listening (%v); its last output:\n%s", cmd.ProcessState, logs.tail())
	case <-time.After(startTimeout):
		s.kill()
		return nil, fmt.Errorf("agents serve did not log `listening` within %v; its last output:\n%s", startTimeout, logs.tail())
	}
	// The server installs its signal handler after it logs `listening`
	// and before it serves: a first answer means a SIGTERM is handled.
	if err := s.waitReady(begin.Add(startTimeout)); err != nil {
		s.kill()
		return nil, err
	}
	s.Ready = time.Since(begin)
	return s, nil
}

// waitReady polls /readyz until it answers 200.
func (s *Server) waitReady(deadline time.Time) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	for {
		resp, err := hc.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("agents serve exited before it was ready (%v); its last output:\n%s", s.cmd.ProcessState, s.logs.tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("agents serve not ready by %v (GET /readyz: %v); its last output:\n%s", startTimeout, err, s.logs.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serverEnv is this process's environment with the home and XDG
// directories moved under dir and the agent's API key variables removed,
// so no config file or key of the machine reaches the server: the agent
// talks to the offline model.
func serverEnv(dir string) []string {
	drop := map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true,
		agentKeyID: true, agentKeyEnv: true}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
	)
}

// Usage reads the server's CPU time and RSS.
func (s *Server) Usage() (Usage, error) {
	select {
	case <-s.exited:
		return Usage{}, fmt.Errorf("agents serve exited (%v); its last output:\n%s", s.cmd.ProcessState, s.logs.tail())
	default:
	}
	return ReadUsage(s.Pid)
}

// Problems is how many WARN and ERROR lines the server logged so far, and
// the first of them.
func (s *Server) Problems() (int, string) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	return s.logs.problems, s.logs.firstProblem
}

// Stop ends the server with SIGTERM, and with SIGKILL if it has not
// stopped 20 s later. It reports a server that did not exit cleanly.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return fmt.Errorf("agents serve had already exited (%v); its last output:\n%s", s.cmd.ProcessState, s.logs.tail())
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.kill()
		return errors.New("agents serve did not stop within 20s of SIGTERM")
	}
	if !s.cmd.ProcessState.Success() {
		return fmt.Errorf("agents serve exited with %v; its last output:\n%s", s.cmd.ProcessState, s.logs.tail())
	}
	return nil
}

func (s *Server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// serverLog reads the server's JSON log lines: it finds the `listening`
// line, counts warnings and errors, and keeps the last lines for error
// messages.
type serverLog struct {
	listening chan string

	mu           sync.Mutex
	last         []string
	problems     int
	firstProblem string
}

const logTail = 20

func (l *serverLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		level, addr := ParseLogLine(line)
		if addr != "" {
			select {
			case l.listening <- addr:
			default:
			}
		}
		l.mu.Lock()
		if len(l.last) == logTail {
			l.last = l.last[1:]
		}
		l.last = append(l.last, line)
		if level == "WARN" || level == "ERROR" {
			if l.problems == 0 {
				l.firstProblem = line
			}
			l.problems++
		}
		l.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

func (l *serverLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.last, "\n")
}

// ParseLogLine returns the level of one JSON log line of the server and,
// when it is the `listening` line, the address it gives. A line that is
// not JSON has neither.
func ParseLogLine(line string) (level, listeningAddr string) {
	var entry struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
		Addr  string `json:"addr"`
	}
	if json.Unmarshal([]byte(line), &entry) != nil {
		return "", ""
	}
	if entry.Msg == "listening" {
		return entry.Level, entry.Addr
	}
	return entry.Level, ""
}

// startProfile starts a CPU profile in the server when it was started
// with a profile file, and one of this process beside it.
func (s *Server) startProfile() error {
	if err := s.startServerProfile(); err != nil || s.profile == "" {
		return err
	}
	return s.startClientProfile()
}

// startServerProfile starts a CPU profile in the server alone (this
// process can run one profile at a time, so of several servers measured
// together only one gets the client's beside it).
func (s *Server) startServerProfile() error {
	if s.profile == "" {
		return nil
	}
	before, err := s.getProfile("allocs")
	if err != nil {
		return err
	}
	s.allocsBefore = before
	resp, err := http.Post(s.URL+"/debug/pprof/cpu/start", "", nil)
	if err != nil {
		return fmt.Errorf("start the CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("start the CPU profile: %s: %s", resp.Status, body)
	}
	return nil
}

// startClientProfile profiles this process too, next to the server's
// profile: on a small machine the load tool and its model share the CPU
// with the server, so what they spend bounds what the server can show.
func (s *Server) startClientProfile() error {
	if err := os.MkdirAll(filepath.Dir(s.profile), 0o755); err != nil {
		return err
	}
	f, err := os.Create(strings.TrimSuffix(s.profile, ".cpu.pprof") + ".client.cpu.pprof")
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("start the load tool's CPU profile: %w", err)
	}
	s.clientProfile = f
	return nil
}

// stopProfile stops the server's CPU profile and writes it to the
// profile file.
func (s *Server) stopProfile() error {
	if s.profile == "" {
		return nil
	}
	if f := s.clientProfile; f != nil {
		pprof.StopCPUProfile()
		s.clientProfile = nil
		if err := f.Close(); err != nil {
			return err
		}
	}
	resp, err := http.Post(s.URL+"/debug/pprof/cpu/stop", "", nil)
	if err != nil {
		return fmt.Errorf("stop the CPU profile: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("stop the CPU profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stop the CPU profile: %s: %s", resp.Status, body)
	}
	if err := os.MkdirAll(filepath.Dir(s.profile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(s.profile, body, 0o644); err != nil {
		return err
	}
	return s.writeAllocs()
}

// writeAllocs writes the server's allocations profile at the end of a
// workload next to the one from its start, so that
//
//	go tool pprof -sample_index=alloc_space -base X.allocs-before.pprof X.allocs.pprof
//
// shows what the workload alone allocated.
func (s *Server) writeAllocs() error {
	after, err := s.getProfile("allocs")
	if err != nil {
		return err
	}
	stem := strings.TrimSuffix(s.profile, ".cpu.pprof")
	if err := os.WriteFile(stem+".allocs-before.pprof", s.allocsBefore, 0o644); err != nil {
		return err
	}
	s.allocsBefore = nil
	return os.WriteFile(stem+".allocs.pprof", after, 0o644)
}

// getProfile answers one of the server's /debug/pprof/ profiles.
func (s *Server) getProfile(nameAndQuery string) ([]byte, error) {
	resp, err := http.Get(s.URL + "/debug/pprof/" + nameAndQuery)
	if err != nil {
		return nil, fmt.Errorf("%s profile: %w", nameAndQuery, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s profile: %w", nameAndQuery, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s profile: %s: %s", nameAndQuery, resp.Status, body)
	}
	return body, nil
}

// heapProfile writes the server's heap profile next to the CPU profile,
// named after phase, when it was started with a profile file. It forces a
// garbage collection first, so it shows what is live now; the rows after
// it then measure a server that just collected (a profiled run is for
// looking, not for the numbers).
func (s *Server) heapProfile(phase string) error {
	if s.profile == "" {
		return nil
	}
	body, err := s.getProfile("heap?gc=1")
	if err != nil {
		return err
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(phase))
	path := strings.TrimSuffix(s.profile, ".cpu.pprof") + "." + name + ".heap.pprof"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
