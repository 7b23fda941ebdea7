package worker

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Model is a model opened for runs, in a worker process: *onnx.Session. Its methods must be safe
// for concurrent use.
type Model interface {
	// Info returns the model's signature.
	Info() Info
	// Piper runs a Piper model; Kokoro a Kokoro one. Each returns the samples, or an error
	// that leaves the model usable.
	Piper(in PiperInput) ([]float32, error)
	Kokoro(in KokoroInput) ([]float32, error)
}

// FramesModel is a Model that can also say how long each phoneme ID or token of a run lasts.
type FramesModel interface {
	Model
	// PiperFrames is Piper that also returns each ID's length in frames, or nil frames if
	// the model does not give them; KokoroFrames is Kokoro that does so for each token.
	PiperFrames(in PiperInput) (samples, frames []float32, err error)
	KokoroFrames(in KokoroInput) (samples, frames []float32, err error)
}

// ServeOptions configures Serve.
type ServeOptions struct {
	// Runs is how many requests run at once, on the one model; zero means 1.
	Runs int
	// Fault makes the worker fail on purpose, for tests only.
	Fault Fault
}

// Fault is a failure a worker makes on purpose, for tests only: it crashes (writes "boom" on
// stderr and dies of SIGKILL, as the kernel kills a process out of memory) or hangs (never
// answers) on the Nth request it reads, counting from 1. A fresh worker counts afresh, so a
// fault at N > 1 strikes a worker mid-article while the retry on its replacement succeeds.
// The zero Fault never fails.
type Fault struct {
	CrashAt, HangAt int
	// PIDFile, if set, is where a hanging worker's child, which sleeps in the worker's process
	// group, writes its process ID: a test can then check that the whole group was killed.
	PIDFile string
	// Once, read by a Pool, gives the fault to its first worker only: the runs it fails are
	// retried on workers without it.
	Once bool
}

// ParseFault parses "crash:N" or "hang:N" ("crash" and "hang" mean N = 1), or "" for none.
func ParseFault(s string) (Fault, error) {
	if s == "" {
		return Fault{}, nil
	}
	what, at, found := strings.Cut(s, ":")
	n := 1
	if found {
		var err error
		if n, err = strconv.Atoi(at); err != nil || n < 1 {
			return Fault{}, fmt.Errorf("fault %q: N must be a whole number from 1", s)
		}
	}
	switch what {
	case "crash":
		return Fault{CrashAt: n}, nil
	case "hang":
		return Fault{HangAt: n}, nil
	}
	return Fault{}, fmt.Errorf("fault %q: want crash:N or hang:N", s)
}

// String returns the fault as ParseFault reads it.
func (f Fault) String() string {
	switch {
	case f.CrashAt > 0:
		return "crash:" + strconv.Itoa(f.CrashAt)
	case f.HangAt > 0:
		return "hang:" + strconv.Itoa(f.HangAt)
	}
	return ""
}

// strike crashes or hangs the process if the fault is due at request n.
func (f Fault) strike(n int) {
	switch n {
	case f.CrashAt:
		fmt.Fprintf(os.Stderr, "boom: fault %s, dying of SIGKILL\n", f)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case f.HangAt:
		if f.PIDFile != "" {
			_ = exec.Command("sh", "-c", `echo $$ > "$0"; exec sleep 1000`, f.PIDFile).Start()
		}
		time.Sleep(math.MaxInt64)
	}
}

// Serve is a worker's side of the protocol (see protocol.go). It sends the ready frame with m's
// kind and signature, then reads requests from r until r ends, runs each on m, opts.Runs at
// a time, and writes the answers to w. It returns nil when r ends (the server closed the
// pipe) and every answer is written, an error if a frame is malformed or w fails (the server
// then kills the worker), or ctx.Err() once ctx ends.
func Serve(ctx context.Context, r io.Reader, w io.Writer, m Model, opts ServeOptions) error {
	info := m.Info()
	kind, err := info.Kind()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	body, err := json.Marshal(hello{Kind: kind, Info: info})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	out := &frameWriter{w: w}
	if err := out.write(frame{typ: frameReady, body: body}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	slots := make(chan struct{}, max(opts.Runs, 1))
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := 1; ; n++ {
		f, err := readFrame(r, maxRequest)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("serve: %w", err)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		opts.Fault.strike(n)
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-slots }()
			// An error of w is the server's end of the pipe gone: the next read ends.
			_ = out.write(answer(m, f))
		})
	}
}

// answer runs the request f on m and returns the answer.
func answer(m Model, f frame) frame {
	var (
		samples, frames []float32
		err             error
	)
	switch f.typ {
	case framePiper:
		var in PiperInput
		if in, err = decodePiper(f.body); err == nil {
			if fm, ok := m.(FramesModel); ok {
				samples, frames, err = fm.PiperFrames(in)
			} else {
				samples, err = m.Piper(in)
			}
		}
	case frameKokoro:
		var in KokoroInput
		if in, err = decodeKokoro(f.body); err == nil {
			if fm, ok := m.(FramesModel); ok {
				samples, frames, err = fm.KokoroFrames(in)
			} else {
				samples, err = m.Kokoro(in)
			}
		}
	default:
		err = fmt.Errorf("unknown request type %q", f.typ)
	}
	if err != nil {
		return frame{typ: frameError, id: f.id, body: []byte(err.Error())}
	}
	if 4*len(samples)+4*len(frames) > maxReply-4 {
		return frame{typ: frameError, id: f.id, body: fmt.Appendf(nil, "%d samples, over the limit of %d", len(samples), maxReply/4)}
	}
	if frames != nil {
		return frame{typ: frameTimed, id: f.id, body: encodeTimed(samples, frames)}
	}
	return frame{typ: frameSamples, id: f.id, body: appendFloat32s(make([]byte, 0, 4*len(samples)), samples)}
}

// frameWriter writes whole frames, one at a time.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (fw *frameWriter) write(f frame) error {
	b := appendFrame(make([]byte, 0, headerSize+len(f.body)), f)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(b)
	return err
}

// Flags are the command-line flags of a worker process, which a Pool gives it. They are the
// flags of the hidden subcommand "narrator onnx-worker".
type Flags struct {
	// Model and Library are the paths of the model and of the onnxruntime library. A Pool
	// passes both as open descriptors, /proc/self/fd/N: a sandboxed worker sees no other
	// file of the server's.
	Model, Library string
	// Threads is the number of threads of one run; Runs the number of runs at once.
	Threads, Runs int
	// Fault is for tests only (see Fault).
	Fault Fault
}

// args returns f as command-line arguments.
func (f Flags) args() []string {
	a := []string{"--model", f.Model, "--onnxruntime", f.Library, "--threads", strconv.Itoa(f.Threads), "--runs", strconv.Itoa(f.Runs)}
	if s := f.Fault.String(); s != "" {
		a = append(a, "--fault", s)
	}
	if f.Fault.PIDFile != "" {
		a = append(a, "--fault-pid-file", f.Fault.PIDFile)
	}
	return a
}

// ParseFlags parses a worker's command-line arguments, as a Pool gives them, writing usage
// messages to output.
func ParseFlags(args []string, output io.Writer) (Flags, error) {
	var f Flags
	var fault string
	fs := flag.NewFlagSet("onnx-worker", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&f.Model, "model", "", "the model (.onnx)")
	fs.StringVar(&f.Library, "onnxruntime", "", "the onnxruntime library")
	fs.IntVar(&f.Threads, "threads", 1, "threads of one run")
	fs.IntVar(&f.Runs, "runs", 1, "runs at once")
	fs.StringVar(&fault, "fault", "", "for tests only: crash:N or hang:N")
	var pidFile string
	fs.StringVar(&pidFile, "fault-pid-file", "", "for tests only: where a hanging worker's child writes its PID")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.Model == "" {
		return f, errors.New("--model is required")
	}
	var err error
	f.Fault, err = ParseFault(fault)
	f.Fault.PIDFile = pidFile
	return f, err
}
