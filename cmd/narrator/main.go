// Command narrator runs the Narrator service and manages its accounts,
// projects and voices. Run `narrator help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp): // -h: the usage was printed
	case err != nil:
		fmt.Fprintln(os.Stderr, "narrator:", err)
		os.Exit(exitCode(err))
	}
}

// usageError is a mistake in how a command was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode is 2 for wrong usage and 1 for any other failure.
func exitCode(err error) int {
	var u *usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

const usage = `Usage: narrator COMMAND [flags]

Commands:
  serve         run the API, the media server and the job workers
  accounts      create accounts and manage their API keys
  users         create dashboard users (sign-in for the web dashboard)
  projects      create and list projects
  voices        list the voices of the catalog
  pronunciations  manage a project's pronunciation rules
  webhooks      manage a project's webhook endpoints
  migrate       create or update the database schema
  copy-data     copy an install's data and media into other stores (SQLite to PostgreSQL, file to S3)
  backup        copy the SQLite database and the media into a directory, while serving
  restore       put a backup back into a new data directory
  demo          create a demo account and project, print a key and a curl
  version       print the version, commit and Go version (also --version)

Run 'narrator COMMAND -h' for a command's flags.`

// env is what every command gets from the outside world.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return usagef("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, e, rest)
	case "accounts":
		return runAccounts(ctx, e, rest)
	case "projects":
		return runProjects(ctx, e, rest)
	case "users":
		return runUsers(ctx, e, rest)
	case "voices":
		return runVoices(ctx, e, rest)
	case "migrate":
		return runMigrate(ctx, e, rest)
	case "pronunciations":
		return runPronunciations(ctx, e, rest)
	case "webhooks":
		return runWebhooks(ctx, e, rest)
	case "demo":
		return runDemo(ctx, e, rest)
	case "copy-data":
		return runCopyData(ctx, e, rest)
	case "backup":
		return runBackup(ctx, e, rest)
	case "restore":
		return runRestore(ctx, e, rest)
	case "onnx-worker": // hidden: a neural voice's worker process, started by the server
		return runONNXWorker(ctx, e, rest)
	case "version", "--version", "-version":
		return runVersion(ctx, e, rest)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		fmt.Fprintln(stderr, usage)
		return usagef("unknown command %q", cmd)
	}
}

// newFlagSet returns a flag set whose errors come back from parse instead
// of exiting.
func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: narrator %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args and refuses stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
