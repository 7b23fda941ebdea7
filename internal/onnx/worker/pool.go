package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/narrator/narrator/internal/proc"
)

// ErrClosed is returned by a Pool's methods after Close.
var ErrClosed = errors.New("onnx worker pool closed")

// ErrRun marks a run that the worker refused or the model failed, the worker living on: the
// request itself is at fault, and trying it again would fail again.
var ErrRun = errors.New("onnx run failed")

// DefaultMemory returns a sandboxed worker's address-space limit (RLIMIT_AS) when
// Config.Memory is zero: 3 GiB, and 1 GiB for each run at once. onnxruntime reads a model's
// file, parses it and copies its weights, and reserves address space for its threads' stacks
// and its allocators' arenas; each run adds its activations. The base is what a worker needs
// for a model as heavy as Kokoro fp32 (TestHeavyModel; docs/figures.md, "Neural voices"), and
// the GiB per run is room for a real model's activations, which no model on the build machine
// could measure.
func DefaultMemory(runs int) int64 {
	return 3<<30 + int64(max(runs, 1))<<30
}

// Config configures a Pool.
type Config struct {
	// Command is the worker's command line before its flags: the narrator binary and
	// "onnx-worker". Tests use their own binary.
	Command []string
	// Library is the onnxruntime library (--onnxruntime); Model the .onnx file.
	Library, Model string
	// Threads is the number of threads of one run (onnxruntime's intra-op threads); zero
	// means 1.
	Threads int
	// Runs is how many runs one worker process makes at once, sharing its one copy of the
	// model; zero means 1.
	Runs int
	// Workers is the most worker processes the pool runs; zero means 1. At most Workers*Runs
	// runs are under way at once; more wait.
	Workers int
	// Sandbox runs the workers with less power than the server; nil runs them as they are.
	Sandbox *proc.Sandbox
	// Memory is a sandboxed worker's address-space limit in bytes; zero means
	// DefaultMemory(Runs).
	Memory int64
	// StartTimeout bounds a worker's start: loading the library and the model. Zero means
	// 60 s.
	StartTimeout time.Duration
	// Fault makes every worker, or with Once the first, fail on purpose: for tests only (see
	// Fault).
	Fault Fault
	// Logger receives a warning for every worker killed and replaced. Nil discards them.
	Logger *slog.Logger
	// Metrics is told of busy, killed and hung workers. Nil records nothing.
	Metrics proc.Recorder
}

// Pool runs a model in warm worker processes, so that a crash, hang or runaway allocation in
// onnxruntime kills a worker and never the server, whose memory holds no model. Each worker
// is Command with Flags, in the Sandbox, in a process group of its own (proc.Isolate); it
// loads the model once and serves many runs over its stdin and stdout (see protocol.go).
// Workers start when runs need them. A run whose worker dies, or that overruns its time limit
// (the worker is then killed), is retried once on a fresh worker; the other runs of a killed
// worker are too. A Pool is safe for concurrent use.
type Pool struct {
	cfg  Config
	log  *slog.Logger
	sem  chan struct{} // one token per run under way
	wg   sync.WaitGroup
	mu   sync.Mutex // guards the slots' load and w, live and closed
	slot []*slot
	live map[*process]struct{} // workers started and not yet dead
	// started counts the workers started, for Fault.Once.
	started int
	// closed is set by Close.
	closed bool
}

// slot is the place of one worker process.
type slot struct {
	load int        // runs assigned, guarded by Pool.mu
	mu   sync.Mutex // held while starting a worker
	w    *process   // nil until started; written under both mu and Pool.mu
}

// New returns a Pool for cfg. It checks that the model and the library can be opened, but
// starts no worker: the first run, or Info, does.
func New(cfg Config) (*Pool, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("onnx pool: no worker command")
	}
	for _, path := range []string{cfg.Library, cfg.Model} {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("onnx pool: %w", err)
		}
		f.Close()
	}
	cfg.Threads, cfg.Runs, cfg.Workers = max(cfg.Threads, 1), max(cfg.Runs, 1), max(cfg.Workers, 1)
	if cfg.Memory <= 0 {
		cfg.Memory = DefaultMemory(cfg.Runs)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.Metrics == nil {
		cfg.Metrics = proc.Discard
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{
		cfg:  cfg,
		log:  log.With("engine", "onnx", "model", cfg.Model),
		sem:  make(chan struct{}, cfg.Workers*cfg.Runs),
		live: make(map[*process]struct{}),
	}
	for range cfg.Workers {
		p.slot = append(p.slot, &slot{})
	}
	return p, nil
}

// Info returns the model's kind and signature, as a worker reports them, starting one if none
// runs. A model that a worker refuses (onnx.Open's checks) fails here with the worker's
// reason.
func (p *Pool) Info(ctx context.Context) (Kind, Info, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return "", Info{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	s, w, err := p.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", Info{}, ctx.Err()
		}
		return "", Info{}, err
	}
	p.release(s)
	return w.hello.Kind, w.hello.Info, nil
}

// Piper runs a Piper model on in and returns its samples. limit bounds the run: a worker that
// has not answered by then is killed, and the run retried once. It returns ctx.Err() if ctx
// ends first, ErrClosed after Close, an error matching ErrRun if the worker refused or failed
// the run, and otherwise the errors of both attempts, joined; one that overran limit matches
// proc.ErrHung.
func (p *Pool) Piper(ctx context.Context, in PiperInput, limit time.Duration) ([]float32, error) {
	r, err := p.run(ctx, frame{typ: framePiper, body: encodePiper(in)}, limit)
	return r.samples, err
}

// PiperFrames is Piper that also returns each phoneme ID's length in frames, where the model
// gives them (PiperSignature.Durations): one per ID of in, or nil.
func (p *Pool) PiperFrames(ctx context.Context, in PiperInput, limit time.Duration) (samples, frames []float32, err error) {
	r, err := p.run(ctx, frame{typ: framePiper, body: encodePiper(in)}, limit)
	return r.samples, r.frames, err
}

// Kokoro runs a Kokoro model on in and returns its samples, as Piper does.
func (p *Pool) Kokoro(ctx context.Context, in KokoroInput, limit time.Duration) ([]float32, error) {
	r, err := p.run(ctx, frame{typ: frameKokoro, body: encodeKokoro(in)}, limit)
	return r.samples, err
}

// KokoroFrames is Kokoro that also returns each token's length in frames of
// KokoroFrameSamples samples, where the model gives them (KokoroSignature.Durations): one per
// token of in, or nil.
func (p *Pool) KokoroFrames(ctx context.Context, in KokoroInput, limit time.Duration) (samples, frames []float32, err error) {
	r, err := p.run(ctx, frame{typ: frameKokoro, body: encodeKokoro(in)}, limit)
	return r.samples, r.frames, err
}

func (p *Pool) run(ctx context.Context, req frame, limit time.Duration) (reply, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	var errs []error
	for attempt := range 2 {
		s, w, err := p.acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return reply{}, ctx.Err()
			}
			if errors.Is(err, ErrClosed) {
				return reply{}, err
			}
			errs = append(errs, err)
			continue
		}
		p.cfg.Metrics.Busy(1)
		r, err := w.call(ctx, req, limit)
		p.cfg.Metrics.Busy(-1)
		if err != nil && ctx.Err() != nil {
			// A worker whose only run is abandoned works for nobody: it is killed now rather
			// than at the run's limit. One that other runs are assigned to is left to them.
			p.mu.Lock()
			alone := s.load == 1 && s.w == w
			p.mu.Unlock()
			if alone {
				w.kill(fmt.Errorf("its only run was cancelled: %w", ctx.Err()))
			}
		}
		p.release(s)
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, ErrRun):
			return reply{}, fmt.Errorf("onnx run: %w", err)
		case ctx.Err() != nil:
			return reply{}, ctx.Err()
		case p.isClosed():
			return reply{}, ErrClosed
		}
		p.log.WarnContext(ctx, "onnx worker killed and replaced", "attempt", attempt+1, "err", err)
		if errors.Is(err, proc.ErrHung) {
			p.cfg.Metrics.TimedOut()
		}
		p.cfg.Metrics.Restarted()
		errs = append(errs, err)
	}
	return reply{}, fmt.Errorf("onnx run: %w", errors.Join(errs...))
}

// acquire assigns a run to a worker: the least loaded live one with room, else a slot whose
// worker has not started or has died, where it starts one. The caller holds a token of p.sem,
// so some slot has room.
func (p *Pool) acquire(ctx context.Context) (*slot, *process, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, ErrClosed
	}
	var best *slot
	for _, s := range p.slot {
		if s.load >= p.cfg.Runs {
			continue
		}
		// A slot with a worker that lives is preferred, to start no worker in vain.
		live := s.w != nil && s.w.alive()
		switch {
		case best == nil:
			best = s
		case live && !(best.w != nil && best.w.alive()):
			best = s
		case live && s.load < best.load:
			best = s
		}
	}
	best.load++
	p.mu.Unlock()

	best.mu.Lock()
	defer best.mu.Unlock()
	if best.w == nil || !best.w.alive() {
		w, err := p.start(ctx)
		if err != nil {
			p.release(best)
			return nil, nil, err
		}
		p.mu.Lock()
		best.w = w
		p.mu.Unlock()
	}
	return best, best.w, nil
}

// release ends a run's assignment to s.
func (p *Pool) release(s *slot) {
	p.mu.Lock()
	s.load--
	p.mu.Unlock()
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Ping reports whether the pool can run: ErrClosed after Close, and an error if the model or
// the library can no longer be opened. It starts no worker.
func (p *Pool) Ping(ctx context.Context) error {
	if p.isClosed() {
		return ErrClosed
	}
	for _, path := range []string{p.cfg.Library, p.cfg.Model} {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("onnx pool: %w", err)
		}
		f.Close()
	}
	return ctx.Err()
}

// Close kills every worker (runs under way fail with ErrClosed) and waits for them. Later
// calls return ErrClosed. It may be called more than once.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	live := make([]*process, 0, len(p.live))
	for w := range p.live {
		live = append(live, w)
	}
	p.mu.Unlock()
	for _, w := range live {
		w.kill(ErrClosed)
	}
	p.wg.Wait()
	return nil
}

// limits bounds a sandboxed worker. Its CPU time (four hours: about as much audio from
// Kokoro on one core) ends a long-lived worker now and then, which the pool replaces as one
// that died; it writes no file.
func (p *Pool) limits() proc.Limits {
	return proc.Limits{Memory: p.cfg.Memory, CPU: 4 * time.Hour, FileSize: 1 << 20, Procs: proc.SandboxProcs}
}

// start starts a worker and waits for its ready frame.
func (p *Pool) start(ctx context.Context) (*process, error) {
	// The worker gets the model and the library as descriptors 3 and 4, read-only, and
	// names them by /proc/self/fd: in a sandbox it sees neither file otherwise.
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, path := range []string{p.cfg.Model, p.cfg.Library} {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("start onnx worker: %w", err)
		}
		files = append(files, f)
	}
	// Started under the lock, so that Close either sees the worker or comes first: its Wait
	// then never races a new goroutine's start.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	flags := Flags{Model: "/proc/self/fd/3", Library: "/proc/self/fd/4", Threads: p.cfg.Threads, Runs: p.cfg.Runs, Fault: p.cfg.Fault}
	if p.cfg.Fault.Once && p.started > 0 {
		flags.Fault = Fault{}
	}
	p.started++
	args := append(append([]string(nil), p.cfg.Command[1:]...), flags.args()...)
	cmd := p.cfg.Sandbox.Command(p.limits(), "", p.cfg.Command[0], args...)
	cmd.ExtraFiles = files
	w, err := startProcess(cmd, &p.wg)
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	p.live[w] = struct{}{}
	p.wg.Go(func() {
		<-w.dead
		p.mu.Lock()
		delete(p.live, w)
		p.mu.Unlock()
	})
	p.mu.Unlock()
	timer := time.NewTimer(p.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case <-w.ready:
		return w, nil
	case <-w.dead:
	case <-timer.C:
		w.kill(fmt.Errorf("%w: not ready within %s, killed", proc.ErrHung, p.cfg.StartTimeout))
	case <-ctx.Done():
		w.kill(ctx.Err())
	}
	<-w.dead
	// The worker knows its files as /proc/self/fd/3 (the model) and 4 (the library).
	return nil, fmt.Errorf("start onnx worker for model %s with library %s: %w", p.cfg.Model, p.cfg.Library, w.err)
}

// process is one worker process: the server's side of its protocol.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proc.Tail
	hello  hello         // set before ready is closed
	ready  chan struct{} // closed when the ready frame has come
	dead   chan struct{} // closed when the worker is dead and err set
	exited chan struct{} // closed once the process has been waited for

	wmu sync.Mutex // serialises writes to stdin

	mu      sync.Mutex
	pending map[uint32]*call
	nextID  uint32
	cause   error // why it was killed, if it was
	err     error // why it died, set before dead is closed
}

// call is a request awaiting its answer.
type call struct {
	reply chan reply
	timer *time.Timer
}

type reply struct {
	samples []float32
	frames  []float32 // each phoneme ID's frames, if the model gives them
	err     error
}

// startProcess starts cmd as a worker, and the goroutines, counted in wg, that wait for it
// and read its answers.
func startProcess(cmd *exec.Cmd, wg *sync.WaitGroup) (*process, error) {
	w := &process{
		cmd:     cmd,
		stderr:  &proc.Tail{},
		ready:   make(chan struct{}),
		dead:    make(chan struct{}),
		exited:  make(chan struct{}),
		pending: make(map[uint32]*call),
	}
	proc.Isolate(cmd)
	// Should a child escape the group kill and hold our pipes, stop waiting for it.
	cmd.WaitDelay = time.Second
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start onnx worker: %w", err)
	}
	// Not cmd.StdoutPipe, which Wait closes: the reader must see every frame the worker
	// wrote before it died, and then the end of the pipe.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start onnx worker: %w", err)
	}
	cmd.Stdout = stdoutW
	err = cmd.Start()
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("start onnx worker: %w", err)
	}
	proc.Lower(cmd)
	wg.Go(func() {
		_ = cmd.Wait()
		close(w.exited)
		// Should a child escape the group kill and hold the pipe, end the reader's wait.
		time.AfterFunc(time.Second, func() { stdout.Close() })
	})
	wg.Go(func() {
		defer stdout.Close()
		w.read(stdout)
	})
	return w, nil
}

// alive reports whether the worker has not died.
func (w *process) alive() bool {
	select {
	case <-w.dead:
		return false
	default:
		return true
	}
}

// read reads the ready frame, then answers, until the worker's stdout ends; then it kills
// what is left of the worker, fails the calls still pending, and closes dead.
func (w *process) read(stdout io.Reader) {
	err := w.readAll(stdout)
	proc.Kill(w.cmd)
	// The pipe broke because the process died, or is dying: wait for its exit status.
	select {
	case <-w.exited:
		err = fmt.Errorf("onnx worker %s: %w%s", w.cmd.ProcessState, err, w.stderr.Suffix())
	case <-time.After(time.Second):
		err = fmt.Errorf("onnx worker: %w%s", err, w.stderr.Suffix())
	}
	w.mu.Lock()
	if w.cause != nil {
		err = fmt.Errorf("%w (%w)", w.cause, err)
	}
	w.err = err
	pending := w.pending
	w.pending = nil
	w.mu.Unlock()
	// Dead before its runs hear of it: a run retried at once must not be given this worker
	// again.
	close(w.dead)
	for _, c := range pending {
		c.timer.Stop()
		c.reply <- reply{err: err}
	}
}

// readAll reads the worker's frames until an error, which it returns.
func (w *process) readAll(stdout io.Reader) error {
	f, err := readFrame(stdout, maxReply)
	if err != nil {
		return fmt.Errorf("read ready frame: %w", noEOF(err))
	}
	if f.typ != frameReady {
		return fmt.Errorf("first frame of type %q, want the ready frame", f.typ)
	}
	if err := json.Unmarshal(f.body, &w.hello); err != nil {
		return fmt.Errorf("ready frame: %w", err)
	}
	close(w.ready)
	for {
		f, err := readFrame(stdout, maxReply)
		if err != nil {
			return fmt.Errorf("read answer: %w", noEOF(err))
		}
		var r reply
		switch f.typ {
		case frameSamples:
			if r.samples, err = float32s(f.body); err != nil {
				return fmt.Errorf("answer %d: %w", f.id, err)
			}
		case frameTimed:
			if r.samples, r.frames, err = decodeTimed(f.body); err != nil {
				return fmt.Errorf("answer %d: %w", f.id, err)
			}
		case frameError:
			r.err = fmt.Errorf("%w: %s", ErrRun, f.body)
		default:
			return fmt.Errorf("answer %d of type %q", f.id, f.typ)
		}
		w.mu.Lock()
		c, ok := w.pending[f.id]
		delete(w.pending, f.id)
		w.mu.Unlock()
		if !ok {
			return fmt.Errorf("answer to request %d, which is not pending", f.id)
		}
		c.timer.Stop()
		c.reply <- r
	}
}

// call sends req and waits for its answer. If none comes within limit, the worker is killed
// (every run it had fails) and the error matches proc.ErrHung. If ctx ends first, call returns
// ctx.Err() at once, and the run goes on unawaited, its limit still enforced.
func (w *process) call(ctx context.Context, req frame, limit time.Duration) (reply, error) {
	c := &call{reply: make(chan reply, 1)}
	w.mu.Lock()
	if w.pending == nil {
		w.mu.Unlock()
		<-w.dead
		return reply{}, w.err
	}
	w.nextID++
	req.id = w.nextID
	w.pending[req.id] = c
	c.timer = time.AfterFunc(limit, func() {
		w.kill(fmt.Errorf("%w: no answer within %s, killed", proc.ErrHung, limit))
	})
	w.mu.Unlock()

	w.wmu.Lock()
	_, err := w.stdin.Write(appendFrame(nil, req))
	w.wmu.Unlock()
	if err != nil {
		// The worker died: read fails the call with why.
		w.kill(fmt.Errorf("write request: %w", err))
	}
	select {
	case r := <-c.reply:
		return r, r.err
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
}

// kill kills the worker's process group for cause, unless it is dead already. Its reader
// then fails the pending calls.
func (w *process) kill(cause error) {
	w.mu.Lock()
	if w.cause == nil {
		w.cause = cause
	}
	w.mu.Unlock()
	proc.Kill(w.cmd)
	_ = w.stdin.Close()
}
