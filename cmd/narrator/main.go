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
	"slices"
	"strings"
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

// A command is one of narrator's commands. Run parses args, the arguments
// after the command's name, with the command's own flags, and does its work.
type command interface {
	Run(ctx context.Context, args []string) error
}

// namedCommand is a command as a word on the command line names it.
type namedCommand struct {
	name    string
	aliases []string // other words for it, not in the usage
	summary string   // its line in the usage
	command
}

// commands returns narrator's commands, in the order the usage lists them.
func commands(e *env) []namedCommand {
	return []namedCommand{
		{"serve", nil, "run the API, the media server and the job workers", serveCommand{e}},
		{"accounts", nil, "create accounts and manage their API keys", accountsCommand(e)},
		{"users", nil, "create dashboard users (sign-in for the web dashboard)", usersCommand(e)},
		{"projects", nil, "create, set, list and resynthesize projects", projectsCommand(e)},
		{"voices", nil, "list, install, download and remove voices", voicesCommand{e}},
		{"pronunciations", nil, "manage a project's pronunciation rules", pronunciationsCommand(e)},
		{"webhooks", nil, "manage a project's webhook endpoints", webhooksCommand(e)},
		{"sources", []string{"feeds"}, "manage the sources (feeds) an rss project narrates", sourcesCommand(e)},
		{"migrate", nil, "create or update the database schema", migrateCommand{e}},
		{"copy-data", nil, "copy an install's data and media into other stores (SQLite to PostgreSQL, file to S3)", copyDataCommand{e}},
		{"backup", nil, "copy the SQLite database and the media into a directory, while serving", backupCommand{e}},
		{"restore", nil, "put a backup back into a new data directory", restoreCommand{e}},
		{"demo", nil, "create a demo account and project, print a key and a curl", demoCommand{e}},
		{"version", []string{"--version", "-version"}, "print the version, commit and Go version (also --version)", versionCommand{e}},
	}
}

// renamedCommands maps a command's old name, still an alias for one
// release, to its new one (docs/decisions/vocabulary.md).
var renamedCommands = map[string]string{"feeds": "sources"}

// find returns the command that word names, or nil.
func find(cmds []namedCommand, word string) command {
	for _, c := range cmds {
		if c.name == word || slices.Contains(c.aliases, word) {
			return c.command
		}
	}
	return nil
}

// usage is narrator's usage: the commands, a line each.
func usage(cmds []namedCommand) string {
	var b strings.Builder
	b.WriteString("Usage: narrator COMMAND [flags]\n\nCommands:\n")
	for _, c := range cmds {
		// Names take 14 columns; a longer one is followed by two spaces.
		fmt.Fprintf(&b, "  %s%s%s\n", c.name, strings.Repeat(" ", max(14-len(c.name), 2)), c.summary)
	}
	b.WriteString("\nRun 'narrator COMMAND -h' for a command's flags.")
	return b.String()
}

// group is a command made of subcommands, such as accounts: the first
// argument names the subcommand, which gets the rest.
type group struct {
	e     *env
	name  string // such as "accounts keys"
	usage string // printed when the subcommand is missing or unknown
	// listMissing names the subcommands in the error of a missing one.
	listMissing bool
	subs        []namedCommand
}

// Run runs the subcommand that args[0] names.
func (g group) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(g.e.stderr, g.usage)
		if g.listMissing {
			names := make([]string, len(g.subs))
			for i, s := range g.subs {
				names[i] = s.name
			}
			last := len(names) - 1
			return usagef("%s: missing subcommand (%s or %s)", g.name, strings.Join(names[:last], ", "), names[last])
		}
		return usagef("%s: missing subcommand", g.name)
	}
	if c := find(g.subs, args[0]); c != nil {
		return c.Run(ctx, args[1:])
	}
	fmt.Fprintln(g.e.stderr, g.usage)
	return usagef("%s: unknown subcommand %q", g.name, args[0])
}

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
	cmds := commands(e)
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage(cmds))
		return usagef("no command given")
	}
	name, rest := args[0], args[1:]
	switch name {
	case "onnx-worker": // hidden: a neural voice's worker process, which the server starts
		return onnxWorkerCommand{e}.Run(ctx, rest)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage(cmds))
		return nil
	}
	if c := find(cmds, name); c != nil {
		if successor, ok := renamedCommands[name]; ok {
			fmt.Fprintf(stderr, "narrator: %q is deprecated, use %q; the old name goes in the release after next\n", name, successor)
		}
		return c.Run(ctx, rest)
	}
	fmt.Fprintln(stderr, usage(cmds))
	return usagef("unknown command %q", name)
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
		return misuse(fs, "unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// misuse prints fs's usage and returns a usage error that starts with the
// command's name.
func misuse(fs *flag.FlagSet, format string, args ...any) error {
	fs.Usage()
	return usagef("%s: %s", fs.Name(), fmt.Sprintf(format, args...))
}

// required is misuse for a required flag left out.
func required(fs *flag.FlagSet, name string) error {
	return misuse(fs, "--%s is required", name)
}
