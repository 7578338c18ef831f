package server

import (
	"bytes"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	runtimepprof "runtime/pprof"
	"sync"
)

// ProfileEnv names the environment variable that, set to 1, serves the
// runtime's profiles under /debug/pprof/ for measuring the server under
// load (tools/loadgen -profile), to admins only; set to "heap", it also
// samples the heap every 4 KiB instead of every 512 KiB, to account for
// small retained objects. Off by default: a profile shows the program's
// internals and costs CPU while it runs.
const ProfileEnv = "AGENTS_PPROF"

func profilingOn() bool { v := os.Getenv(ProfileEnv); return v == "1" || v == "heap" }

// fineHeapProfile is the "heap" setting: the fine sampling costs CPU in
// every allocation, so a CPU profile taken with it overstates them.
func fineHeapProfile() bool { return os.Getenv(ProfileEnv) == "heap" }

// mountProfiles serves the standard profile handlers and a CPU profile
// that a client starts and stops (POST /debug/pprof/cpu/start, then
// POST /debug/pprof/cpu/stop answers the profile), so it covers exactly
// the measured work rather than a fixed number of seconds.
func mountProfiles(mux *http.ServeMux, guard func(http.Handler) http.Handler) {
	if fineHeapProfile() {
		runtime.MemProfileRate = 4096
	}
	handle := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, guard(h)) }
	handle("GET /debug/pprof/", pprof.Index)
	handle("GET /debug/pprof/profile", pprof.Profile)
	handle("GET /debug/pprof/symbol", pprof.Symbol)
	var cpu cpuProfile
	handle("POST /debug/pprof/cpu/start", cpu.start)
	handle("POST /debug/pprof/cpu/stop", cpu.stop)
}

// cpuProfile is a CPU profile between two requests.
type cpuProfile struct {
	mu  sync.Mutex
	buf *bytes.Buffer
}

func (p *cpuProfile) start(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf != nil {
		http.Error(w, "a CPU profile is already running", http.StatusConflict)
		return
	}
	buf := &bytes.Buffer{}
	if err := runtimepprof.StartCPUProfile(buf); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	p.buf = buf
	w.WriteHeader(http.StatusNoContent)
}

func (p *cpuProfile) stop(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf == nil {
		http.Error(w, "no CPU profile is running", http.StatusConflict)
		return
	}
	runtimepprof.StopCPUProfile()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(p.buf.Bytes())
	p.buf = nil
}
