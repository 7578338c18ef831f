package loadgen

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", ms(7), 99, 7 * time.Millisecond},
		{"median of odd", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of even is the lower", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of 10", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{"p99 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p100", hundred, 100, 100 * time.Millisecond},
		{"tiny p is the min", hundred, 0.001, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	t.Parallel()
	l := Summarise([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond})
	want := Latency{N: 3, P50: Duration(2 * time.Millisecond), P90: Duration(3 * time.Millisecond), P99: Duration(3 * time.Millisecond), Max: Duration(3 * time.Millisecond)}
	if l != want {
		t.Errorf("Summarise = %+v, want %+v", l, want)
	}
	if got, err := Duration(1500 * time.Microsecond).MarshalJSON(); err != nil || string(got) != "1.5" {
		t.Errorf("Duration JSON = %s, %v; want 1.5 (milliseconds)", got, err)
	}
}

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	// Fields 14 and 15 are utime 1234 and stime 56; the command name
	// holds spaces and a parenthesis.
	stat := "4242 (agents (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 9 0 100 2000000 5000 18446744073709551615\n"
	got, err := ParseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := (1234 + 56) * 10 * time.Millisecond; got != want {
		t.Errorf("ParseStatCPU = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 agents S 1", "4242 (agents) S 1 2 3", "4242 (a) S 1 4242 4242 0 -1 0 0 0 0 0 x 56 0"} {
		if _, err := ParseStatCPU(bad); err == nil {
			t.Errorf("ParseStatCPU(%q) succeeded, want an error", bad)
		}
	}
	// This process's own stat parses.
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if _, err := ParseStatCPU(string(b)); err != nil {
		t.Errorf("/proc/self/stat: %v", err)
	}
}

func TestParseStatusRSS(t *testing.T) {
	t.Parallel()
	status := "Name:\tagents\nVmPeak:\t  900000 kB\nVmRSS:\t   21504 kB\nRssAnon:\t    6304 kB\nThreads:\t8\n"
	got, err := ParseStatusRSS(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(21504 * 1024); got != want {
		t.Errorf("ParseStatusRSS = %d, want %d", got, want)
	}
	if anon, err := ParseStatusAnon(status); err != nil || anon != 6304*1024 {
		t.Errorf("ParseStatusAnon = %d, %v, want %d", anon, err, 6304*1024)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tlots kB\n"} {
		if _, err := ParseStatusRSS(bad); err == nil {
			t.Errorf("ParseStatusRSS(%q) succeeded, want an error", bad)
		}
	}
	if u, err := ReadUsage(os.Getpid()); err == nil && u.RSS <= 0 {
		t.Errorf("ReadUsage(self) = %+v, want a positive RSS", u)
	}
}

func TestParseLoadAverage(t *testing.T) {
	t.Parallel()
	if got := parseLoadAverage("0.80 1.30 1.17 2/345 6789\n"); got != 0.8 {
		t.Errorf("parseLoadAverage = %v, want 0.8", got)
	}
	if got := parseLoadAverage(""); got != -1 {
		t.Errorf("parseLoadAverage(empty) = %v, want -1", got)
	}
}

func TestParseMetrics(t *testing.T) {
	t.Parallel()
	text := `# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 17
go_memstats_heap_inuse_bytes 3.629056e+06
agents_sessions{status="ready"} 2
agents_requests_total{code="ok",procedure="GET /v1/sessions/{id}"} 5
broken_line
`
	m := ParseMetrics(text)
	want := map[string]float64{
		"go_goroutines":                   3.0 + 14,
		"go_memstats_heap_inuse_bytes":    3629056,
		`agents_sessions{status="ready"}`: 2,
		`agents_requests_total{code="ok",procedure="GET /v1/sessions/{id}"}`: 5,
	}
	if len(m) != len(want) {
		t.Errorf("ParseMetrics = %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

func TestReadFrames(t *testing.T) {
	t.Parallel()
	stream := ": ping\n\n" +
		"id: 3\nevent: session.updated\ndata: {\"a\":1}\n\n" +
		"id: 4.1\r\nevent: text.delta\r\ndata: one\r\ndata: two\r\n\r\n" +
		"data: no kind\n\n" +
		"event: run.stopped\ndata:" + strings.Repeat("x", 100<<10) + "\n\n" +
		"event: cut\ndata: never ended"
	type frame struct{ kind, data string }
	want := []frame{
		{"session.updated", `{"a":1}`},
		{"text.delta", "one\ntwo"},
		{"message", "no kind"},
		{"run.stopped", strings.Repeat("x", 100<<10)},
	}
	// Frames split between reads anywhere are parsed whole.
	for name, r := range map[string]io.Reader{
		"one read":       strings.NewReader(stream),
		"byte by byte":   iotest.OneByteReader(strings.NewReader(stream)),
		"half of a read": iotest.HalfReader(strings.NewReader(stream)),
	} {
		var got []frame
		err := ReadFrames(r, func(kind, data []byte, _ time.Time) bool {
			got = append(got, frame{string(kind), string(data)})
			return true
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %d frames, want %d: %.200v", name, len(got), len(want), got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d = %.40q, want %.40q", name, i, got[i], want[i])
			}
		}
	}

	n := 0
	_ = ReadFrames(strings.NewReader("data: 1\n\ndata: 2\n\n"), func([]byte, []byte, time.Time) bool { n++; return false })
	if n != 1 {
		t.Errorf("ReadFrames went on after fn returned false: %d calls", n)
	}
}

func TestEventTime(t *testing.T) {
	t.Parallel()
	data := []byte(`{"seq":7,"session_id":"x","owner":"local","time":"2026-12-01T09:54:17.286285203Z","kind":"run.stopped","delta_seq":0,"status":"ready","reason":"","steps":1,"text":""}`)
	got, ok := EventTime(data)
	want := time.Date(2026, 12, 1, 9, 54, 17, 286285203, time.UTC)
	if !ok || !got.Equal(want) {
		t.Errorf("EventTime = %v, %v; want %v", got, ok, want)
	}
	for _, bad := range []string{`{"seq":"7"}`, `{"time":"yesterday"}`, `{"time":"2026-12-01`} {
		if _, ok := EventTime([]byte(bad)); ok {
			t.Errorf("EventTime(%s) found a time", bad)
		}
	}
}

func TestParseLogLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, level, addr string }{
		{`{"time":"t","level":"INFO","msg":"listening","addr":"http://127.0.0.1:32945","socket":"","auth":false}`, "INFO", "http://127.0.0.1:32945"},
		{`{"time":"t","level":"INFO","msg":"agents loaded","count":1}`, "INFO", ""},
		{`{"time":"t","level":"ERROR","msg":"step failed","addr":"x"}`, "ERROR", ""},
		{`panic: something`, "", ""},
	}
	for _, tt := range tests {
		level, addr := ParseLogLine(tt.line)
		if level != tt.level || addr != tt.addr {
			t.Errorf("ParseLogLine(%s) = %q, %q; want %q, %q", tt.line, level, addr, tt.level, tt.addr)
		}
	}
}

// TestSeedSessions seeds a database made with the server's own schema.
func TestSeedSessions(t *testing.T) {
	t.Parallel()
	schema, err := os.ReadFile("../../backend/internal/store/migrations/sqlite/0001_init.sql")
	if err != nil {
		t.Skip("the server's schema is not at its place in the repository:", err)
	}
	path := filepath.Join(t.TempDir(), "agents.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range []string{
		string(schema),
		`INSERT INTO sessions (id, agent, owner, title, status, turn_count, created, updated)
		 VALUES ('0c37c130-7604-427a-b8bc-300914c00f9f', 'load', 'local', 'hi', 'ready', 2, 1000000000000, 1000000005000)`,
		`INSERT INTO turns VALUES ('0c37c130-7604-427a-b8bc-300914c00f9f', 0, 1000000001000, '{"user":{"text":"hi"}}'),
		                          ('0c37c130-7604-427a-b8bc-300914c00f9f', 1, 1000000004000, '{"llm":{"text":"Done."}}')`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := SeedSessions(ctx, path, 5); err != nil {
		t.Fatal(err)
	}
	var sessions, turns int
	if err := db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM turns`).Scan(&turns); err != nil {
		t.Fatal(err)
	}
	if sessions != 6 || turns != 12 {
		t.Errorf("after seeding 5: %d sessions, %d turns; want 6 and 12", sessions, turns)
	}
	var id, title string
	var created, updated, turn1 int64
	err = db.QueryRow(`SELECT s.id, s.title, s.created, s.updated, t.created FROM sessions s JOIN turns t ON t.session_id = s.id AND t.idx = 1
		WHERE s.id = ?`, seedIDPrefix+"000000000005").Scan(&id, &title, &created, &updated, &turn1)
	if err != nil {
		t.Fatal(err)
	}
	if title != "hi" || created != 1000000000000-5*1000000 || updated != 1000000005000-5*1000000 || turn1 != created+4000 {
		t.Errorf("seeded session 5: title %q, created %d, updated %d, turn 1 created %d", title, created, updated, turn1)
	}
}

// TestIdleWaveDeltas checks the idle scenario's arithmetic: a first-wave
// row against the baseline, a second-wave row against the first wave's
// row of the same phase (per the second wave's sessions) and against the
// baseline (per all of them).
func TestIdleWaveDeltas(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	row := func(step string, rss, heap, runtime int64, goroutines int) IdleRow {
		return IdleRow{Phase: step, step: step, RSS: rss * mib, HeapInuse: heap * mib, Runtime: runtime * mib, Goroutines: goroutines}
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	check := func(name string, d IdleDelta, against string, sessions int, rss, goroutines, heap, runtime float64) {
		t.Helper()
		if d.Against != against || d.Sessions != sessions || !near(d.RSSPer1000, rss*mib) || !near(d.GoroutinesPer1000, goroutines) ||
			!near(d.HeapPer1000, heap*mib) || !near(d.RuntimePer1000, runtime*mib) {
			t.Errorf("%s = %+v, want against %q per %d: Δrss %v MiB, Δgoroutines %v, Δheap %v MiB, Δruntime %v MiB per 1,000",
				name, d, against, sessions, rss, goroutines, heap, runtime)
		}
	}

	base := row("baseline", 100, 4, 10, 17)
	// 1,000 sessions: +12 MiB RSS, +23 goroutines, +9 MiB heap, +4 MiB runtime.
	first := []IdleRow{row("after touch", 130, 20, 20, 1040), row("evicted, after a GC", 112, 13, 14, 40)}
	for i := range first {
		first[i].setDeltas(base, nil, 1000, 1000)
	}
	check("wave 1 after touch", first[0].IdleDelta, "baseline", 1000, 30, 1023, 16, 10)
	check("wave 1 evicted", first[1].IdleDelta, "baseline", 1000, 12, 23, 9, 4)
	if first[1].VsBaseline != nil {
		t.Errorf("a first-wave row has VsBaseline %+v; its deltas are already against the baseline", first[1].VsBaseline)
	}

	// 9,000 more, just after their touch: against wave 1's first row.
	touched := row("after touch", 175, 65, 30, 10040)
	touched.setDeltas(base, first, 9000, 10000)
	check("wave 2 after touch, against wave 1", touched.IdleDelta, "wave 1: after touch", 9000, 5, 1000, 5, 10/9.0)

	// Evicted: +9 MiB RSS, +9 goroutines, +18 MiB heap, no runtime more
	// than the same phase of wave 1.
	second := row("evicted, after a GC", 121, 31, 14, 49)
	second.setDeltas(base, first, 9000, 10000)
	check("wave 2 evicted, against wave 1", second.IdleDelta, "wave 1: evicted, after a GC", 9000, 1, 1, 2, 0)
	if second.VsBaseline == nil {
		t.Fatal("a second-wave row has no VsBaseline")
	}
	check("wave 2 evicted, against the baseline", *second.VsBaseline, "baseline", 10000, 2.1, 3.2, 2.7, 0.4)

	// A phase the first wave has no row of: against the baseline alone.
	lone := row("after 1m0s idle", 120, 14, 14, 45)
	lone.setDeltas(base, first, 9000, 10000)
	check("wave 2 without a match", lone.IdleDelta, "baseline", 10000, 2, 2.8, 1, 0.4)
	if lone.VsBaseline != nil {
		t.Errorf("a second-wave row without a match has VsBaseline %+v", lone.VsBaseline)
	}

	// The table: each second-wave row is followed by its deltas against
	// the baseline; the JSON keeps the first wave's field names.
	res := &IdleRows{Sessions: 1000, More: 9000, Rows: append([]IdleRow{base}, first[0], first[1], second)}
	header, rows := res.Table()
	if len(rows) != 5 {
		t.Fatalf("Table has %d rows, want 5 (baseline, two of wave 1, one of wave 2 and its line against the baseline): %q", len(rows), rows)
	}
	for _, r := range rows {
		if len(r) != len(header) {
			t.Errorf("row %q has %d cells, the header %d", r, len(r), len(header))
		}
	}
	against := slices.Index(header, "Δ against")
	if against < 0 {
		t.Fatalf("no Δ against column in %q", header)
	}
	if got := rows[3][against : against+3]; !slices.Equal(got, []string{"wave 1: evicted, after a GC", "9000", "1.0"}) {
		t.Errorf("wave 2's row: %q, want against wave 1's row, per 9000, 1.0 MB", got)
	}
	if got := rows[4]; got[0] != "" || !slices.Equal(got[against:against+3], []string{"baseline", "10000", "2.1"}) {
		t.Errorf("wave 2's line against the baseline: %q", got)
	}
	b, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	vs, _ := m["vs_baseline"].(map[string]any)
	if m["against"] != "wave 1: evicted, after a GC" || !near(m["rss_delta_per_1000_bytes"].(float64), mib) || vs == nil || vs["against"] != "baseline" {
		t.Errorf("wave 2's row as JSON: %s", b)
	}
}

func TestMedianRun(t *testing.T) {
	t.Parallel()
	run := func(cpu time.Duration, pps float64) PromptRow {
		return PromptRow{Sessions: 16, CPUPerPrompt: Duration(cpu), PromptsPerSec: pps}
	}
	one := run(time.Millisecond, 900)
	if got := medianRun([]PromptRow{one}); got != one {
		t.Errorf("medianRun of one run = %+v, want it as it is", got)
	}
	got := medianRun([]PromptRow{run(3*time.Millisecond, 500), run(time.Millisecond, 1500), run(2*time.Millisecond, 800), run(4*time.Millisecond, 400)})
	if got.CPUPerPrompt != Duration(2*time.Millisecond) || got.PromptsPerSec != 800 || got.Runs != 4 {
		t.Errorf("medianRun = %+v, want the run of 2 ms (the lower middle one) of 4 runs", got)
	}
	if got.CPUPerPromptAt != [2]Duration{Duration(time.Millisecond), Duration(4 * time.Millisecond)} || got.PromptsPerSecAt != [2]float64{400, 1500} {
		t.Errorf("medianRun ranges = %v and %v, want 1–4 ms and 400–1500 prompts/s", got.CPUPerPromptAt, got.PromptsPerSecAt)
	}
}

func TestMeasureSpeed(t *testing.T) {
	s, err := MeasureSpeed()
	if err != nil {
		t.Fatal(err)
	}
	if s.JSON <= 0 || s.Loopback <= 0 {
		t.Errorf("MeasureSpeed = %+v, want both figures above zero", s)
	}
	if got := (Speed{JSON: Duration(42 * time.Microsecond), Loopback: Duration(9 * time.Microsecond)}).String(); got != "JSON 42 µs, loopback round trip 9 µs" {
		t.Errorf("String = %q", got)
	}
}

func TestParseInitTrace(t *testing.T) {
	out := "init internal/bytealg @0 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init runtime @0.029 ms, 0.11 ms clock, 0 bytes, 0 allocs\n" +
		"v1.2.3\n" +
		"init github.com/yuin/goldmark/util @1.1 ms, 0.61 ms clock, 146152 bytes, 1967 allocs\n" +
		"init main @2.0 ms, 0.002 ms clock, 48 bytes, 1 allocs\n"
	total, inits, err := ParseInitTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if total != 146200 || len(inits) != 4 || inits[2].Package != "github.com/yuin/goldmark/util" {
		t.Errorf("got %d bytes, %v", total, inits)
	}
	if _, _, err := ParseInitTrace("v1.2.3\n"); err == nil {
		t.Error("no inittrace lines, no error")
	}
}

// Over two servers, each session's posts and waits take turns between
// them, prompt by prompt: half of each session's posts, and half its
// waits, reach either server.
func TestPromptSpreadTakesTurnsBetweenTheServers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{} // "server method session" → requests
	clients := make([]*client, 2)
	for i := range clients {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			session := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/sessions/"), "/")[0]
			mu.Lock()
			seen[fmt.Sprintf("%d %s %s", i, r.Method, session)]++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			if r.Method == http.MethodPost {
				fmt.Fprint(w, `{"session": {"id": "s", "status": "running", "turn_count": 1}}`)
				return
			}
			fmt.Fprint(w, `{"id": "s", "status": "ready", "turn_count": 2}`)
		}))
		t.Cleanup(srv.Close)
		clients[i] = newClient(srv.URL, 4)
	}
	lat, errs := promptSpread(context.Background(), clients, []string{"a", "b"}, 4)
	if n, first := errs.get(); n > 0 || len(lat) != 8 {
		t.Fatalf("%d prompts, %d errors (%s), want 8 and none", len(lat), n, first)
	}
	for _, server := range []int{0, 1} {
		for _, method := range []string{"POST", "GET"} {
			for _, session := range []string{"a", "b"} {
				key := fmt.Sprintf("%d %s %s", server, method, session)
				if seen[key] != 2 {
					t.Errorf("server %d got %d %s requests for session %s, want 2 of its 4: %v", server, seen[key], method, session, seen)
				}
			}
		}
	}
}

func TestAComparedRowSaysItsRatioToTheBase(t *testing.T) {
	rows := &PromptRows{Rows: []PromptRow{
		{Sessions: 16, PerSession: 10, CPUPerPrompt: Duration(2 * time.Millisecond), PromptsPerSec: 100, Latency: Latency{P50: Duration(4 * time.Millisecond)}, Binary: "bin/agents"},
		{Sessions: 16, PerSession: 10, CPUPerPrompt: Duration(time.Millisecond), PromptsPerSec: 200, Latency: Latency{P50: Duration(2 * time.Millisecond)}, Binary: "bin/base/agents", Base: true},
	}}
	header, table := rows.Table()
	col := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("no column %q in %q", name, header)
		}
		return i
	}
	if got := table[0][col("cpu/prompt ÷ base")]; got != "2.00×" {
		t.Errorf("cpu/prompt ratio = %q, want 2.00×", got)
	}
	if got := table[0][col("prompts/s ÷ base")]; got != "0.50×" {
		t.Errorf("prompts/s ratio = %q, want 0.50×", got)
	}
	if got := table[1][col("p50 ÷ base")]; got != "" {
		t.Errorf("the base's own row has a ratio %q", got)
	}
}
