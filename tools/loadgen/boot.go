package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BootRow is what one binary costs before it does any work: its package
// initialisation, the time until `agents serve` answers /healthz, and
// the memory of a server that has done nothing since.
type BootRow struct {
	Binary string `json:"binary"`
	Runs   int    `json:"runs"`
	// InitBytes is what package initialisation allocates, from
	// GODEBUG=inittrace=1 on `agents version` (the median of Runs).
	InitBytes int64 `json:"init_bytes"`
	// InitHeaviest names the packages whose initialisation allocates most.
	InitHeaviest []string `json:"init_heaviest"`
	// Healthz is exec to the first 200 from /healthz, on an empty
	// database (median, min, max).
	Healthz    Duration `json:"healthz_median_ms"`
	HealthzMin Duration `json:"healthz_min_ms"`
	HealthzMax Duration `json:"healthz_max_ms"`
	// HealthzCPU is the CPU time the server's threads had run when
	// /healthz first answered (median): on a busy machine the wall time
	// waits for the CPU, this does not.
	HealthzCPU Duration `json:"healthz_cpu_median_ms"`
	// IdleRSS is the server's RSS BootSettle after /healthz answered,
	// with no request since (median); IdleAnon the part of it that is not
	// the binary's pages (RssAnon).
	IdleRSS  int64 `json:"idle_rss_bytes"`
	IdleAnon int64 `json:"idle_anon_bytes"`
}

// BootRows is the boot scenario's result.
type BootRows struct {
	Settle Duration  `json:"settle_ms"`
	Rows   []BootRow `json:"rows"`
}

// Table implements Result.
func (r *BootRows) Table() ([]string, [][]string) {
	header := []string{"binary", "runs", "init MB", "healthz median ms", "min ms", "max ms", "cpu to healthz ms", "idle rss MB", "of it anon MB", "heaviest inits"}
	compared := len(r.Rows) > 1
	if compared {
		header = append(header, "cpu to healthz ÷ base", "idle rss ÷ base")
	}
	var rows [][]string
	for i, b := range r.Rows {
		row := []string{b.Binary, itoa(b.Runs), strconv.FormatFloat(float64(b.InitBytes)/1e6, 'f', 2, 64),
			ms(b.Healthz), ms(b.HealthzMin), ms(b.HealthzMax), ms(b.HealthzCPU), mb(b.IdleRSS), mb(b.IdleAnon), strings.Join(b.InitHeaviest, ", ")}
		if compared {
			// The first row is the measured binary's, the second the base's.
			if base := r.Rows[len(r.Rows)-1]; i == 0 {
				row = append(row, ratio(float64(b.HealthzCPU), float64(base.HealthzCPU)), ratio(float64(b.IdleRSS), float64(base.IdleRSS)))
			} else {
				row = append(row, "", "")
			}
		}
		rows = append(rows, row)
	}
	return header, rows
}

// runBoot measures each binary (the run's, and -compare's) BootRuns
// times, the binaries taking turns.
func runBoot(ctx context.Context, e *env) (Result, error) {
	bins := []string{e.bin}
	if e.cfg.Compare != "" {
		bins = append(bins, e.cfg.Compare)
	}
	runs := max(e.cfg.BootRuns, 1)
	type samples struct {
		init    []int64
		heavy   []string
		healthz []time.Duration
		cpu     []time.Duration
		rss     []int64
		anon    []int64
	}
	got := make([]samples, len(bins))
	for r := range runs {
		for b, bin := range bins {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e.logf("   %s (run %d of %d)", bin, r+1, runs)
			init, heavy, err := initAllocs(bin)
			if err != nil {
				return nil, err
			}
			got[b].init, got[b].heavy = append(got[b].init, init), heavy
			healthz, cpu, rss, anon, err := e.bootServe(ctx, bin)
			if err != nil {
				return nil, err
			}
			got[b].healthz = append(got[b].healthz, healthz)
			got[b].cpu = append(got[b].cpu, cpu)
			got[b].rss = append(got[b].rss, rss)
			got[b].anon = append(got[b].anon, anon)
		}
	}
	res := &BootRows{Settle: Duration(e.cfg.BootSettle)}
	for b, s := range got {
		slices.Sort(s.init)
		slices.Sort(s.healthz)
		slices.Sort(s.cpu)
		slices.Sort(s.rss)
		slices.Sort(s.anon)
		res.Rows = append(res.Rows, BootRow{
			Binary: bins[b], Runs: runs,
			InitBytes: s.init[len(s.init)/2], InitHeaviest: s.heavy,
			Healthz:    Duration(Percentile(s.healthz, 50)),
			HealthzMin: Duration(s.healthz[0]), HealthzMax: Duration(s.healthz[len(s.healthz)-1]),
			HealthzCPU: Duration(Percentile(s.cpu, 50)),
			IdleRSS:    s.rss[len(s.rss)/2], IdleAnon: s.anon[len(s.anon)/2],
		})
	}
	return res, nil
}

// initAllocs runs `agents version` with GODEBUG=inittrace=1 and sums the
// bytes its package initialisation allocates ("init PKG @… ms, … ms
// clock, N bytes, M allocs"), naming the three packages that allocate
// most.
func initAllocs(bin string) (int64, []string, error) {
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, nil, fmt.Errorf("%s version: %w\n%s", bin, err, out)
	}
	total, inits, err := ParseInitTrace(string(out))
	if err != nil {
		return 0, nil, err
	}
	slices.SortFunc(inits, func(a, b PackageInit) int { return int(b.Bytes - a.Bytes) })
	var heavy []string
	for _, p := range inits[:min(3, len(inits))] {
		heavy = append(heavy, fmt.Sprintf("%s %.0f KB", p.Package, float64(p.Bytes)/1e3))
	}
	return total, heavy, nil
}

// PackageInit is one line of GODEBUG=inittrace=1.
type PackageInit struct {
	Package string
	Bytes   int64
}

// ParseInitTrace sums the bytes of inittrace's lines in out.
func ParseInitTrace(out string) (int64, []PackageInit, error) {
	var total int64
	var inits []PackageInit
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil {
			return 0, nil, fmt.Errorf("inittrace line %q: %w", sc.Text(), err)
		}
		inits = append(inits, PackageInit{f[1], n})
		total += n
	}
	if len(inits) == 0 {
		return 0, nil, errors.New("no inittrace lines: is the binary a Go program?")
	}
	return total, inits, nil
}

// bootServe starts `agents serve` on a new, empty database and a port
// chosen beforehand, polls /healthz from the moment of exec until it
// answers 200 (noting the CPU time the server has had), waits
// BootSettle and reads the server's RSS, and the anonymous part of it.
func (e *env) bootServe(ctx context.Context, bin string) (healthz, cpu time.Duration, rss, anon int64, err error) {
	dir, err := e.newDir("boot")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	port, err := freePort()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	cmd := exec.Command(bin, "serve",
		"--port", strconv.Itoa(port),
		"--db", filepath.Join(dir, "agents.db"),
		"--offline-model", e.model.URL,
		"--agent-file", e.agentFile,
		"--log-format", "json",
		"--shutdown-grace", "2s",
	)
	cmd.Dir, cmd.Env = dir, serverEnv(dir)
	logs, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer logs.Close()
	cmd.Stdout, cmd.Stderr = logs, logs
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	for {
		// A refused connection answers at once: poll as fast as that.
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				healthz = time.Since(begin)
				cpu, _ = threadsCPU(cmd.Process.Pid)
				break
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logs.Name())
			return 0, 0, 0, 0, fmt.Errorf("agents serve exited before /healthz answered; its output:\n%s", log)
		case <-ctx.Done():
			return 0, 0, 0, 0, ctx.Err()
		default:
		}
		if time.Since(begin) > startTimeout {
			return 0, 0, 0, 0, fmt.Errorf("/healthz did not answer within %v", startTimeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
	select {
	case <-time.After(e.cfg.BootSettle):
	case <-ctx.Done():
		return 0, 0, 0, 0, ctx.Err()
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if rss, err = ParseStatusRSS(string(status)); err != nil {
		return 0, 0, 0, 0, err
	}
	if anon, err = ParseStatusAnon(string(status)); err != nil {
		return 0, 0, 0, 0, err
	}
	return healthz, cpu, rss, anon, nil
}

// threadsCPU is the time pid's threads have run on a CPU, from each
// thread's /proc/PID/task/TID/schedstat (nanoseconds, exact, where
// /proc/PID/stat counts 10 ms ticks).
func threadsCPU(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("schedstat %q: %w", b, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on, as far as
// anyone can know before using it.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
