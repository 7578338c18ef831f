// Package loadgen measures a real `agents serve` process over HTTP.
//
// It runs the agents binary with a temporary data directory and --port 0
// against an offline model served in this process (answering every
// prompt at once with text and no tool call; see Model), drives it through the
// plain JSON routes and the SSE stream as scripts do, and reads the
// server's CPU time and RSS from /proc. Each scenario starts servers of
// its own:
//
//   - prompts: N concurrent sessions × P prompts; prompts/s, latency,
//     server CPU per prompt, RSS.
//   - fanout: S subscribers of GET /v1/events while sessions prompt;
//     events delivered/s, delay until a subscriber sees run.stopped,
//     server CPU per event and subscriber; with -fanout-kinds the
//     subscribers take only those kinds of event.
//   - getsession: GetSession against session length.
//   - stored: the prompts workload with many stored sessions.
//   - startup: time from exec to the `listening` line with many stored
//     sessions.
//   - boot: what any start costs: the bytes package initialisation
//     allocates (GODEBUG=inittrace=1 on `agents version`), exec to the
//     first 200 from /healthz on an empty database, and the RSS of the
//     server left idle a few seconds; the median of several starts.
//   - idle: memory and goroutines of sessions touched once, then idle,
//     then evicted; then of a second wave of more sessions, against the
//     first wave's rows: the marginal cost on a warm server.
//   - cluster: the prompts workload on SQLite with one server, and on
//     PostgreSQL with one server and with two on one database, each
//     request to the next server as a reverse proxy without sticky
//     sessions sends them; prompts/s, latency, the servers' CPU per
//     prompt and that of the PostgreSQL backends serving the database.
//
// A prompt is PostMessage followed by a waiting GetSession for the turns
// after the prompt's, until the run it started stopped (ready). Stored sessions are written into the SQLite
// file directly (see SeedSessions).
package loadgen
