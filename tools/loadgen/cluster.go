package loadgen

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The cluster scenario runs the prompts workload on SQLite with one
// server, and on PostgreSQL with one and with two servers on one database,
// the requests spread over the servers the way a plain reverse proxy
// spreads them: each request to the next server, whichever holds the
// session. It reads the CPU time of the servers and of the PostgreSQL
// backends serving the run's database.

// DefaultPostgres is the PostgreSQL server the cluster scenario creates
// its databases on when Config.Postgres is empty.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// ClusterRow is one run of the cluster scenario.
type ClusterRow struct {
	Store         string   `json:"store"` // sqlite or postgres
	Servers       int      `json:"servers"`
	Sessions      int      `json:"sessions"`
	PerSession    int      `json:"prompts_per_session"`
	Prompts       int      `json:"prompts"`
	Errors        int      `json:"errors"`
	FirstError    string   `json:"first_error,omitempty"`
	Wall          Duration `json:"wall_ms"`
	PromptsPerSec float64  `json:"prompts_per_s"`
	Latency       Latency  `json:"latency_ms"`
	// ServerCPU is every server's CPU time, together.
	ServerCPU    Duration `json:"server_cpu_ms"`
	CPUPerPrompt Duration `json:"server_cpu_per_prompt_ms"`
	// DBCPU is the CPU time of the PostgreSQL backends connected to the
	// run's database (zero on SQLite, whose work is the server's own).
	DBCPU          Duration `json:"database_cpu_ms"`
	DBCPUPerPrompt Duration `json:"database_cpu_per_prompt_ms"`
	ClientCPU      Duration `json:"client_cpu_ms"`
	// RSS is the largest server's, at the end.
	RSS  int64 `json:"server_rss_bytes"`
	Runs int   `json:"runs,omitempty"`
}

// ClusterRows is the cluster scenario's result.
type ClusterRows struct {
	Rows []ClusterRow `json:"rows"`
}

func (r *ClusterRows) failed() bool {
	return slices.ContainsFunc(r.Rows, func(row ClusterRow) bool { return row.Errors > 0 })
}

// Table implements Result.
func (r *ClusterRows) Table() ([]string, [][]string) {
	header := []string{"store", "servers", "sessions", "prompts", "errors", "prompts/s", "p50 ms", "p99 ms", "server cpu/prompt ms", "db cpu/prompt ms", "both ms", "rss MB", "runs"}
	var rows [][]string
	for _, p := range r.Rows {
		rows = append(rows, []string{p.Store, itoa(p.Servers), itoa(p.Sessions), fmt.Sprintf("%d×%d", p.Sessions, p.PerSession), itoa(p.Errors),
			rate(p.PromptsPerSec), ms(p.Latency.P50), ms(p.Latency.P99),
			ms(p.CPUPerPrompt), ms(p.DBCPUPerPrompt), ms(p.CPUPerPrompt + p.DBCPUPerPrompt), mb(p.RSS), itoa(max(1, p.Runs))})
	}
	return header, rows
}

// clusterSetups are the stores and server counts the scenario compares.
var clusterSetups = []struct {
	store   string
	servers int
}{{"sqlite", 1}, {"postgres", 1}, {"postgres", 2}}

func runCluster(ctx context.Context, e *env) (Result, error) {
	repeat := max(1, e.cfg.Repeat)
	// runs[i][s] are the runs of concurrency i on setup s; sizes and
	// setups take turns, so a slow spell of the machine falls on all.
	runs := make([][][]ClusterRow, len(e.cfg.Concurrency))
	for i := range runs {
		runs[i] = make([][]ClusterRow, len(clusterSetups))
	}
	result := func() *ClusterRows {
		res := &ClusterRows{}
		for i := range runs {
			for _, rs := range runs[i] {
				if len(rs) > 0 {
					res.Rows = append(res.Rows, medianClusterRun(rs))
				}
			}
		}
		return res
	}
	e.note("database CPU: the PostgreSQL backends connected to the run's database from the start of the workload to its end; PostgreSQL's background processes (WAL writer, checkpointer) are not counted")
	for r := range repeat {
		for i, n := range e.cfg.Concurrency {
			for s, setup := range clusterSetups {
				what := fmt.Sprintf("%s, %d server(s): %d sessions × %d prompts", setup.store, setup.servers, n, e.cfg.Prompts)
				if repeat > 1 {
					what += fmt.Sprintf(" (run %d of %d)", r+1, repeat)
				}
				e.logf("   %s", what)
				row, err := clusterRun(ctx, e, setup.store, setup.servers, n, e.cfg.Prompts)
				runs[i][s] = append(runs[i][s], row)
				if err != nil {
					return result(), fmt.Errorf("%s: %w", what, err)
				}
			}
		}
	}
	return result(), nil
}

// medianClusterRun is the run with the median server CPU per prompt.
func medianClusterRun(runs []ClusterRow) ClusterRow {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b ClusterRow) int { return cmp.Compare(a.CPUPerPrompt, b.CPUPerPrompt) })
	row := sorted[(len(sorted)-1)/2]
	row.Runs = len(runs)
	return row
}

// clusterRun starts the servers of one setup on a new database, creates
// the sessions through them in turn and has each prompt perSession times,
// all sessions at once.
func clusterRun(ctx context.Context, e *env, store string, servers, sessions, perSession int) (row ClusterRow, err error) {
	row = ClusterRow{Store: store, Servers: servers, Sessions: sessions, PerSession: perSession}
	db := "" // SQLite: a new file in the server's directory
	var pg *pgDatabase
	if store == "postgres" {
		admin := cmp.Or(e.cfg.Postgres, DefaultPostgres)
		if pg, err = createDatabase(ctx, admin); err != nil {
			return row, err
		}
		defer func() {
			if dropErr := pg.drop(); err == nil {
				err = dropErr
			}
		}()
		db = pg.dsn
	}
	var srvs []*Server
	var clients []*client
	defer func() {
		for i, srv := range srvs {
			if stopErr := e.stop(srv, clients[i]); err == nil {
				err = stopErr
			}
		}
	}()
	for i := range servers {
		var args []string
		if pg != nil {
			args = []string{"--server-id", fmt.Sprintf("load-%d", i+1)}
		}
		srv, c, err := e.start(fmt.Sprintf("cluster-%s-%d-of-%d", store, i+1, servers), db, args...)
		if err != nil {
			return row, err
		}
		srvs, clients = append(srvs, srv), append(clients, c)
	}
	for _, c := range clients {
		if err := warmUp(ctx, c); err != nil {
			return row, err
		}
	}
	ids := make([]string, sessions)
	if err := parallel(ctx, sessions, 16, func(i int) error {
		id, err := clients[i%len(clients)].create(ctx, "")
		ids[i] = id
		return err
	}); err != nil {
		return row, err
	}

	self, err := ReadUsage(os.Getpid())
	if err != nil {
		return row, err
	}
	before, err := serversCPU(srvs)
	if err != nil {
		return row, err
	}
	var dbBefore map[int]time.Duration
	if pg != nil {
		if dbBefore, err = pg.backendsCPU(ctx); err != nil {
			return row, err
		}
	}
	for i, srv := range srvs {
		start := srv.startServerProfile
		if i == 0 {
			start = srv.startProfile
		}
		if err := start(); err != nil {
			return row, err
		}
	}
	begin := time.Now()
	lat, errs := promptSpread(ctx, clients, ids, perSession)
	wall := time.Since(begin)
	for _, srv := range srvs {
		if err := srv.stopProfile(); err != nil {
			return row, err
		}
	}
	after, err := serversCPU(srvs)
	if err != nil {
		return row, err
	}
	if pg != nil {
		dbAfter, err := pg.backendsCPU(ctx)
		if err != nil {
			return row, err
		}
		for pid, cpu := range dbAfter {
			if b, ok := dbBefore[pid]; ok {
				row.DBCPU += Duration(cpu - b)
			}
		}
	}
	selfAfter, err := ReadUsage(os.Getpid())
	if err != nil {
		return row, err
	}
	for _, srv := range srvs {
		u, err := srv.Usage()
		if err != nil {
			return row, err
		}
		row.RSS = max(row.RSS, u.RSS)
	}
	row.Latency = Summarise(lat)
	row.Prompts = len(lat)
	row.Errors, row.FirstError = errs.get()
	row.Wall = Duration(wall)
	row.ServerCPU = Duration(after - before)
	row.ClientCPU = Duration(selfAfter.CPU - self.CPU)
	if row.Prompts > 0 {
		row.PromptsPerSec = float64(row.Prompts) / wall.Seconds()
		row.CPUPerPrompt = row.ServerCPU / Duration(row.Prompts)
		row.DBCPUPerPrompt = row.DBCPU / Duration(row.Prompts)
	}
	if row.Errors > 0 {
		e.note("%s, %d server(s), %d sessions: %d of %d prompts failed; the first: %s", store, servers, sessions, row.Errors, sessions*perSession, row.FirstError)
	}
	return row, nil
}

// serversCPU is the CPU time of every server, together.
func serversCPU(srvs []*Server) (time.Duration, error) {
	var total time.Duration
	for _, srv := range srvs {
		u, err := srv.Usage()
		if err != nil {
			return 0, err
		}
		total += u.CPU
	}
	return total, nil
}

// promptSpread is promptAll over several servers, as a reverse proxy
// without sticky sessions sends the requests: prompt i of session k posts
// to server k+i and waits on the next one, so with two servers half the
// posts and half the waits reach the server that does not hold the
// session (the one it was created on, k).
func promptSpread(ctx context.Context, clients []*client, ids []string, perSession int) ([]time.Duration, *errorCount) {
	var lat samples
	errs := &errorCount{}
	var wg sync.WaitGroup
	for k, id := range ids {
		wg.Go(func() {
			for i := range perSession {
				next := k + i
				pick := func() *client {
					c := clients[next%len(clients)]
					next++
					return c
				}
				begin := time.Now()
				if err := spreadPrompt(ctx, pick, id, fmt.Sprintf("prompt %d", i)); err != nil {
					errs.add(err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				lat.add(time.Since(begin))
			}
		})
	}
	wg.Wait()
	return lat.take(), errs
}

// spreadPrompt is client.prompt with each request sent through the client
// pick returns.
func spreadPrompt(ctx context.Context, pick func() *client, id, text string) error {
	c := pick()
	if c.postWait {
		return c.postAndWait(ctx, id, text)
	}
	turn, err := c.post(ctx, id, text)
	if err != nil {
		return err
	}
	c = pick()
	if c.waitWhole {
		turn = -1
	}
	_, err = c.wait(ctx, id, turn)
	return err
}

// pgDatabase is a database created for one run, and a connection to the
// server it is on.
type pgDatabase struct {
	name  string
	dsn   string
	admin *pgx.Conn
}

// createDatabase creates a database with a random name on the server of
// the URL admin.
func createDatabase(ctx context.Context, admin string) (*pgDatabase, error) {
	u, err := url.Parse(admin)
	if err != nil {
		return nil, fmt.Errorf("-postgres: %w", err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL (-postgres): %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "loadgen_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	return &pgDatabase{name: name, dsn: u.String(), admin: conn}, nil
}

// drop drops the database, ending the connections still open to it.
func (d *pgDatabase) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer d.admin.Close(ctx)
	if _, err := d.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", d.name, err)
	}
	return nil
}

// backendsCPU reads the CPU time of each backend connected to the
// database, by process id. The PostgreSQL server must run on this
// machine.
func (d *pgDatabase) backendsCPU(ctx context.Context) (map[int]time.Duration, error) {
	rows, err := d.admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1", d.name)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	cpu := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		u, err := ReadUsage(int(pid))
		if err != nil {
			continue // a backend that ended meanwhile
		}
		cpu[int(pid)] = u.CPU
	}
	if len(pids) > 0 && len(cpu) == 0 {
		return nil, fmt.Errorf("cannot read the CPU time of PostgreSQL's backends: is the server on this machine?")
	}
	return cpu, nil
}
