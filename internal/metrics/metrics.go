// Package metrics holds Narrator's Prometheus metrics on a registry of its
// own: nothing is registered globally, so two servers in one process (the
// tests) never share a series. It is the only package that imports the
// Prometheus client. The parts that record take small interfaces they
// declare themselves, which *Metrics satisfies; cmd/narrator checks that at
// compile time.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/narrator/narrator"
)

// Metrics is one server's metrics. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	jobAttempts *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec

	realTimeFactor *prometheus.HistogramVec
	audioSeconds   *prometheus.CounterVec

	engineBusy      *prometheus.GaugeVec
	engineRestarted *prometheus.CounterVec
	engineTimedOut  *prometheus.CounterVec

	webhookDeliveries *prometheus.CounterVec

	sourceReads        *prometheus.CounterVec
	sourceReadDuration prometheus.Histogram
	sourceItems        *prometheus.CounterVec

	createGroups *prometheus.CounterVec
}

// New returns the metrics on a new registry, which also holds the Go
// runtime's and the process's own collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "narrator_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		jobAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_job_attempts_total",
			Help: "Job attempts worked, by job kind and outcome (completed, retry, discarded, cancelled, snoozed).",
		}, []string{"kind", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "narrator_job_duration_seconds",
			Help:    "Time one job attempt took, by job kind.",
			Buckets: []float64{.01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200},
		}, []string{"kind"}),
		realTimeFactor: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "narrator_synthesis_real_time_factor",
			Help:    "Wall time of an audio's synthesis divided by the length of the audio it made, by engine: below 1 is faster than real time.",
			Buckets: []float64{.01, .02, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 5},
		}, []string{"engine"}),
		audioSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_audio_seconds_total",
			Help: "Seconds of audio synthesized and finished, by engine.",
		}, []string{"engine"}),
		engineBusy: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "narrator_engine_processes_busy",
			Help: "Speech engine processes working on a sentence now, by engine.",
		}, []string{"engine"}),
		engineRestarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_engine_process_restarts_total",
			Help: "Speech engine processes killed after a failure and replaced, by engine.",
		}, []string{"engine"}),
		engineTimedOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_engine_process_timeouts_total",
			Help: "Speech engine processes killed because they overran a sentence's time limit, by engine.",
		}, []string{"engine"}),
		webhookDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_webhook_attempts_total",
			Help: "Webhook delivery attempts, by outcome (delivered, failed, skipped).",
		}, []string{"outcome"}),
		sourceReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_source_reads_total",
			Help: "Reads of rss projects' sources, by outcome (ok, not_modified, error).",
		}, []string{"outcome"}),
		sourceReadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "narrator_source_read_duration_seconds",
			Help:    "Time one read of a source took: fetch, parse, article pages and creates.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}),
		sourceItems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_source_items_total",
			Help: "Source items handled, by action (created, updated, skipped: not narrated because invalid or unreadable).",
		}, []string{"action"}),
		createGroups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "narrator_postgres_create_groups_total",
			Help: "Groups of creates this node committed or tried on PostgreSQL, by plan (ahead: planned against the last group and held; ahead_missed: its checks failed, so it ran the long way; read: the long way).",
		}, []string{"plan"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.requestDuration,
		m.jobAttempts, m.jobDuration,
		m.realTimeFactor, m.audioSeconds,
		m.engineBusy, m.engineRestarted, m.engineTimedOut,
		m.webhookDeliveries,
		m.sourceReads, m.sourceReadDuration, m.sourceItems,
		m.createGroups,
	)
	// Known outcomes start at zero, so that rates of them exist from the
	// first scrape.
	for _, o := range []string{"delivered", "failed", "skipped"} {
		m.webhookDeliveries.WithLabelValues(o)
	}
	for _, o := range []string{narrator.SourceStatusOK, narrator.SourceStatusNotModified, narrator.SourceStatusError} {
		m.sourceReads.WithLabelValues(o)
	}
	for _, a := range []string{"created", "updated", "skipped"} {
		m.sourceItems.WithLabelValues(a)
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition formats. Errors
// of a collector are logged and the rest is still served.
func (m *Metrics) Handler(logger *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// ObserveRequest records one answered HTTP request. route is the pattern
// that matched it, never its raw path, so that the series stay few.
func (m *Metrics) ObserveRequest(route, method string, code int, took time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	method = boundedMethod(method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.requestDuration.WithLabelValues(route, method).Observe(took.Seconds())
}

// boundedMethod keeps the method label to the standard methods: anyone can
// send any token as a method.
func boundedMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	default:
		return "OTHER"
	}
}

// JobWorked records one job attempt of a kind, with its outcome and how
// long it took.
func (m *Metrics) JobWorked(kind, outcome string, took time.Duration) {
	m.jobAttempts.WithLabelValues(kind, outcome).Inc()
	m.jobDuration.WithLabelValues(kind).Observe(took.Seconds())
}

// Synthesized records an audio finished: the engine of its voice, the
// length of the audio and the wall time its synthesis took.
func (m *Metrics) Synthesized(engine string, audio, took time.Duration) {
	if audio <= 0 {
		return
	}
	m.audioSeconds.WithLabelValues(engine).Add(audio.Seconds())
	m.realTimeFactor.WithLabelValues(engine).Observe(took.Seconds() / audio.Seconds())
}

// Engine returns the recorder of one engine's processes (a proc.Recorder).
func (m *Metrics) Engine(name string) *EngineRecorder {
	return &EngineRecorder{
		busy:      m.engineBusy.WithLabelValues(name),
		restarted: m.engineRestarted.WithLabelValues(name),
		timedOut:  m.engineTimedOut.WithLabelValues(name),
	}
}

// EngineRecorder records what one engine's processes do.
type EngineRecorder struct {
	busy                prometheus.Gauge
	restarted, timedOut prometheus.Counter
}

// Busy adds delta (1 or -1) to the engine's busy processes.
func (r *EngineRecorder) Busy(delta int) { r.busy.Add(float64(delta)) }

// Restarted records a process killed after a failure, to be replaced.
func (r *EngineRecorder) Restarted() { r.restarted.Inc() }

// TimedOut records a process killed for overrunning its limit.
func (r *EngineRecorder) TimedOut() { r.timedOut.Inc() }

// WebhookAttempt records one attempt at a webhook delivery by outcome.
func (m *Metrics) WebhookAttempt(outcome string) {
	m.webhookDeliveries.WithLabelValues(outcome).Inc()
}

// SourceRead records one read of a feed: its outcome (a
// narrator.SourceStatus constant) and how long it took.
func (m *Metrics) SourceRead(outcome string, took time.Duration) {
	m.sourceReads.WithLabelValues(outcome).Inc()
	m.sourceReadDuration.Observe(took.Seconds())
}

// SourceItems records n source items handled with an action: created,
// updated or skipped.
func (m *Metrics) SourceItems(action string, n int) {
	if n > 0 {
		m.sourceItems.WithLabelValues(action).Add(float64(n))
	}
}

// CreateGroup records a group of creates on PostgreSQL and how it was
// planned: ahead, ahead_missed or read.
func (m *Metrics) CreateGroup(plan string) {
	m.createGroups.WithLabelValues(plan).Inc()
}

// JobCounter counts the jobs that are not finished; the job queue.
type JobCounter interface {
	// JobCounts returns the count of every kind and unfinished state,
	// zeros included.
	JobCounts(ctx context.Context) ([]narrator.JobCount, error)
}

// WatchQueue adds the gauge narrator_jobs, the jobs by kind and state
// (queue depth), which asks jobs at every scrape, bounded by a timeout.
func (m *Metrics) WatchQueue(jobs JobCounter) {
	m.reg.MustRegister(queueCollector{jobs: jobs})
}

var jobsDesc = prometheus.NewDesc("narrator_jobs",
	"Jobs not finished, by job kind and state (available, scheduled, retryable, running, pending): the queue depth.",
	[]string{"kind", "state"}, nil)

// queueCollector reads the queue depth at scrape time, so that every node
// reports the whole queue as the database holds it.
type queueCollector struct {
	jobs JobCounter
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.jobs.JobCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	for _, n := range counts {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n.Count), n.Kind, n.State)
	}
}
