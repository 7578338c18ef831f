package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Metrics are the server's Prometheus metrics, on a registry of their own.
// They come from four places: the event stream (runs, tool calls, events
// by kind), the runner's step timings (OnStep), the request layer, and, at
// scrape time, the store (sessions by status), the hub (subscribers,
// lagged cuts) and the runner (sessions loaded, runs active).
type Metrics struct {
	reg *prometheus.Registry

	runsStarted  *prometheus.CounterVec
	runsStopped  *prometheus.CounterVec
	runsFailed   *prometheus.CounterVec
	eventsByKind *prometheus.CounterVec
	toolCalls    *prometheus.HistogramVec
	steps        prometheus.Counter
	stepSeconds  prometheus.Histogram
	modelSeconds prometheus.Histogram
	toolSeconds  prometheus.Histogram
	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	cost         *prometheus.CounterVec
	// runner is the server's, set by New: the metrics exist before it
	// (its OnStep is theirs).
	runner atomic.Pointer[runner.Runner]
	// cluster registers the metrics of a server that shares its
	// database, once, when New is given their sources.
	cluster sync.Once
	// The label sets: the kinds of event (events.Kinds), the reasons the
	// runner stops a run for (a run a client stopped with a reason of
	// its own is other), the machine codes of session.failed.
	kinds, reasons, codes labels
}

// Label values come from fixed sets only. A value taken from a client, a
// model or an agent file (a stop reason is a client's own words) would
// make a series per value, without bound; what is not in a label's set
// counts as other. The request labels need no set: the procedure is a
// registered one or a route's pattern, the code a Connect code.
const otherLabel = "other"

// labels is the fixed set of one label's values.
type labels map[string]bool

func labelsOf(values ...string) labels {
	l := make(labels, len(values))
	for _, v := range values {
		l[v] = true
	}
	return l
}

// of returns v when it is in the set, else other.
func (l labels) of(v string) string {
	if l[v] {
		return v
	}
	return otherLabel
}

// latencyBuckets span a quick tool call to a long model answer, in seconds.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// NewMetrics registers the metrics. sessions is read at every scrape for
// the sessions by status; hub gives the subscriber and event counts.
func NewMetrics(sessions store.Sessions, hub *events.Hub) *Metrics {
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		kinds:   labelsOf(events.Kinds()...),
		reasons: labelsOf(runner.StopDone, runner.StopCancelled, runner.StopPaused, runner.StopWaiting, runner.StopMaxSteps, runner.StopBudget),
		codes:   labelsOf(errs.CodeModelError, errs.CodeStoreError, errs.CodeUnknownAgent, errs.CodeRecoveryFailed, errs.CodeParamsRequired, errs.CodeBudgetUnavailable),
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_runs_started_total", Help: "Runs started, by what started them.",
		}, []string{"trigger"}),
		runsStopped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_runs_stopped_total", Help: "Runs that ended without failing, by reason (done, cancelled, paused, waiting, max_steps, budget_exceeded, or other: a reason a client gave).",
		}, []string{"reason"}),
		runsFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_runs_failed_total", Help: "Runs that failed, by machine code (model_error, store_error, unknown_agent, recovery_failed, params_required, budget_unavailable, other).",
		}, []string{"code"}),
		eventsByKind: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_events_total", Help: "Events published, by kind.",
		}, []string{"kind"}),
		toolCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agents_tool_call_duration_seconds", Help: "Duration of attached tool calls, by how they ended.", Buckets: latencyBuckets,
		}, []string{"status"}),
		steps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agents_steps_total", Help: "Steps completed (a model call plus its tool calls).",
		}),
		stepSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agents_step_duration_seconds", Help: "Wall time of a step.", Buckets: latencyBuckets,
		}),
		modelSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agents_model_call_duration_seconds", Help: "Time a step spent in its model call.", Buckets: latencyBuckets,
		}),
		toolSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agents_step_tools_duration_seconds", Help: "Time a step spent waiting for its tool calls.", Buckets: latencyBuckets,
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_requests_total", Help: "Requests served, by procedure or route and Connect code.",
		}, []string{"procedure", "code"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agents_request_duration_seconds", Help: "Request duration, by procedure or route (event streams last as long as the client stays).", Buckets: latencyBuckets,
		}, []string{"procedure"}),
		// Owners come from the server's tokens file and models from its
		// agent files: bounded sets, not a client's words.
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_model_tokens_total", Help: "Tokens of the model answers, by owner, model and type (input, output; cached input and reasoning output are also counted on their own).",
		}, []string{"owner", "model", "type"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agents_model_cost_usd_total", Help: "Cost in US dollars of the model answers under the price table, by owner and model; models without a price cost nothing.",
		}, []string{"owner", "model"}),
	}
	m.reg.MustRegister(m.tokens, m.cost)
	m.reg.MustRegister(
		m.runsStarted, m.runsStopped, m.runsFailed, m.eventsByKind, m.toolCalls,
		m.steps, m.stepSeconds, m.modelSeconds, m.toolSeconds, m.requests, m.requestTime,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		sessionsCollector{sessions: sessions, desc: prometheus.NewDesc("agents_sessions", "Sessions by status.", []string{"status"}, nil)},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agents_subscribers", Help: "Live event subscriptions (streams of clients, plus one of the metrics themselves).",
		}, func() float64 { return float64(hub.Subscribers()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agents_subscribers_lagged_total", Help: "Subscriptions cut because their client fell behind.",
		}, func() float64 { return float64(hub.Lagged()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agents_event_seq", Help: "Sequence number of the newest event: every event ever published by this process.",
		}, func() float64 { return float64(hub.Seq()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agents_sessions_loaded", Help: "Sessions held in memory: running, or idle until their idle eviction.",
		}, func() float64 { return m.fromRunner((*runner.Runner).LiveSessions) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agents_runs_active", Help: "Runs in flight, the ones the run limits count.",
		}, func() float64 { return m.fromRunner((*runner.Runner).ActiveRuns) }),
	)
	return m
}

// fromRunner reads a count of the runner, 0 before there is one.
func (m *Metrics) fromRunner(count func(*runner.Runner) int) float64 {
	if r := m.runner.Load(); r != nil {
		return float64(count(r))
	}
	return 0
}

// LeaseStats describe the run leases of a server that shares its database
// with others (DESIGN.md §6a): counts since the process started, and the
// state of the renewal.
type LeaseStats struct {
	// Held is the number of leases the server holds now.
	Held int
	// Claims counts the leases taken: of sessions loaded here, and of
	// sessions taken over (Failovers).
	Claims uint64
	// Failovers counts the claims of sessions another server ran, whose
	// lease had expired or been released.
	Failovers uint64
	// Lost counts the leases found held by another server while this one
	// thought them its own; the runs under them stopped.
	Lost uint64
	// RenewedAt is the last time the database confirmed the leases held
	// (a claim or a renewal); zero before the first.
	RenewedAt time.Time
	// TTL is how long a lease lasts unless renewed.
	TTL time.Duration
}

// Leases reports a server's run leases: the runner's, on a database shared
// with other servers.
type Leases interface {
	LeaseStats() LeaseStats
}

// EventFeed reports how far behind the other servers this server's fan-out
// of their events is.
type EventFeed interface {
	// Lag is how long the newest event of another server that this
	// server fanned out took from its commit to the fan-out.
	Lag() time.Duration
}

// watchCluster registers the lease and cross-server metrics, read from
// leases and feed at each scrape; a nil source has no metrics.
func (m *Metrics) watchCluster(leases Leases, feed EventFeed) {
	m.cluster.Do(func() {
		if leases != nil {
			m.reg.MustRegister(newLeaseCollector(leases))
		}
		if feed != nil {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "agents_cluster_event_lag_seconds", Help: "How long the newest event of another server took from its commit to this server's subscribers.",
			}, func() float64 { return feed.Lag().Seconds() }))
		}
	})
}

// leaseCollector reads the lease counts once per scrape.
type leaseCollector struct {
	leases                                 Leases
	held, claims, failovers, lost, renewal *prometheus.Desc
}

func newLeaseCollector(l Leases) leaseCollector {
	return leaseCollector{
		leases:    l,
		held:      prometheus.NewDesc("agents_leases_held", "Run leases this server holds.", nil, nil),
		claims:    prometheus.NewDesc("agents_lease_claims_total", "Run leases taken: of sessions loaded here and of sessions taken over.", nil, nil),
		failovers: prometheus.NewDesc("agents_lease_failovers_total", "Sessions taken over from another server whose lease had expired or been released.", nil, nil),
		lost:      prometheus.NewDesc("agents_leases_lost_total", "Run leases found held by another server; the runs under them stopped.", nil, nil),
		renewal:   prometheus.NewDesc("agents_lease_renewal_age_seconds", "Time since the database last confirmed the leases held (0 before the first).", nil, nil),
	}
}

func (c leaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.held
	ch <- c.claims
	ch <- c.failovers
	ch <- c.lost
	ch <- c.renewal
}

func (c leaseCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.leases.LeaseStats()
	age := 0.0
	if !st.RenewedAt.IsZero() {
		age = time.Since(st.RenewedAt).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(st.Held))
	ch <- prometheus.MustNewConstMetric(c.claims, prometheus.CounterValue, float64(st.Claims))
	ch <- prometheus.MustNewConstMetric(c.failovers, prometheus.CounterValue, float64(st.Failovers))
	ch <- prometheus.MustNewConstMetric(c.lost, prometheus.CounterValue, float64(st.Lost))
	ch <- prometheus.MustNewConstMetric(c.renewal, prometheus.GaugeValue, age)
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveStep records the timings of one step; it is the runner's OnStep.
func (m *Metrics) ObserveStep(s runner.StepStats) {
	m.steps.Inc()
	m.stepSeconds.Observe(s.Total.Seconds())
	m.modelSeconds.Observe(s.Model.Seconds())
	m.toolSeconds.Observe(s.Tools.Seconds())
}

// ObserveUsage counts the usage of one model answer; it is the runner's
// Budgets.OnUsage.
func (m *Metrics) ObserveUsage(owner, model string, u session.Usage) {
	for _, c := range []struct {
		kind string
		n    int64
	}{{"input", u.Prompt}, {"output", u.Completion}, {"cached_input", u.Cached}, {"reasoning_output", u.Reasoning}} {
		m.tokens.WithLabelValues(owner, model, c.kind).Add(float64(c.n))
	}
	var cost float64
	if u.Cost != nil {
		cost = u.Cost.Dollars()
	}
	m.cost.WithLabelValues(owner, model).Add(cost)
}

func (m *Metrics) observeRequest(procedure, code string, d time.Duration) {
	if procedure == "" {
		procedure = "other"
	}
	m.requests.WithLabelValues(procedure, code).Inc()
	m.requestTime.WithLabelValues(procedure).Observe(d.Seconds())
}

// countEvent updates the metrics an event tells about.
func (m *Metrics) countEvent(ev *agentsv1.Event) {
	m.eventsByKind.WithLabelValues(m.kinds.of(ev.GetKind())).Inc()
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_RunStarted:
		m.runsStarted.WithLabelValues(triggerName(b.RunStarted.GetTrigger())).Inc()
	case *agentsv1.Event_RunStopped:
		m.runsStopped.WithLabelValues(m.reasons.of(b.RunStopped.GetReason())).Inc()
	case *agentsv1.Event_SessionFailed:
		m.runsFailed.WithLabelValues(m.codes.of(b.SessionFailed.GetCode())).Inc()
	case *agentsv1.Event_ToolCompleted:
		r := b.ToolCompleted.GetResult()
		m.toolCalls.WithLabelValues(resultStatusName(r.GetStatus())).Observe(r.GetDuration().AsDuration().Seconds())
	}
}

func triggerName(t agentsv1.RunTrigger) string {
	switch t {
	case agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE:
		return "message"
	case agentsv1.RunTrigger_RUN_TRIGGER_MAIL:
		return "mail"
	case agentsv1.RunTrigger_RUN_TRIGGER_RESUME:
		return "resume"
	case agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY:
		return "recovery"
	}
	return "unspecified"
}

func resultStatusName(s agentsv1.ToolResultStatus) string {
	switch s {
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK:
		return "ok"
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR:
		return "error"
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED:
		return "cancelled"
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED:
		return "aborted"
	}
	return "unspecified"
}

// Follow counts the events of hub until stop is called or the hub shuts
// down. It subscribes before it returns, so every event published after
// that is counted; a subscription cut for lagging resumes after the last
// event counted (from the hub's ring, when it still holds them).
func (m *Metrics) Follow(hub *events.Hub) (stop func()) {
	sub, _ := hub.Subscribe(events.AllScope(), nil)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			last, stopped := m.drain(sub, done)
			sub.Close()
			if stopped || !errors.Is(sub.Err(), events.ErrLagged) {
				return
			}
			var err error
			if sub, err = hub.SubscribeAt(context.Background(), events.AllScope(), &last); err != nil {
				// Only reading the log fails: count from now on.
				sub, _ = hub.Subscribe(events.AllScope(), nil)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-finished
	}
}

// drain counts events until the subscription ends or done is closed, and
// returns the position of the last event counted (a delta's too, so a
// resumption does not count the deltas after its seq again).
func (m *Metrics) drain(sub *events.Subscription, done <-chan struct{}) (last events.Position, stopped bool) {
	last = sub.SnapshotPosition()
	for {
		select {
		case <-done:
			return last, true
		case ev, ok := <-sub.C():
			if !ok {
				return last, false
			}
			m.countEvent(ev)
			last = events.PositionOf(ev)
		}
	}
}

// sessionsCollector reads the sessions by status from the store at each
// scrape, so the numbers are right after a restart and never drift.
type sessionsCollector struct {
	sessions store.Sessions
	desc     *prometheus.Desc
}

// scrapeTimeout bounds the store query of one scrape.
const scrapeTimeout = 5 * time.Second

func (c sessionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c sessionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.sessions.CountByStatus(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, st := range []session.Status{session.StatusReady, session.StatusRunning, session.StatusWaiting, session.StatusPaused, session.StatusFailed} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}

// metricsRoute serves /metrics: to anyone when the metrics are public,
// else to admin tokens only (they describe every owner's work).
func (s *Server) metricsRoute() http.Handler {
	if s.security.PublicMetrics {
		return s.metrics.Handler()
	}
	return s.adminOnly("the metrics", s.metrics.Handler())
}

// adminOnly refuses h to anyone but an admin (anyone, without auth),
// saying that what needs an admin token.
func (s *Server) adminOnly(what string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isAdmin(r.Context()) {
			s.writeError(w, r, errs.PermissionDenied(errs.CodePermissionDenied, "%s need an admin token", what))
			return
		}
		h.ServeHTTP(w, r)
	})
}
