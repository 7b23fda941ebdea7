package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/neural"
	"github.com/narrator/narrator/internal/onnx/worker"
)

// installFlags are the flags of voices install and voices download.
type installFlags struct {
	data                                     func() (config.Backends, error)
	name, gender, language, speaker, license string
	card, library                            string
	sandbox                                  string
	priority                                 int
	asJSON                                   bool
}

// installFlagSet returns the flag set of voices install or download, with the flags both
// take set into f.
func installFlagSet(e *env, name, synopsis string, f *installFlags) *flag.FlagSet {
	fs := newFlagSet(e, name, synopsis)
	f.data = config.BackendFlags(fs, e.getenv)
	getenv := e.getenv
	fs.StringVar(&f.name, "name", "", "the voice's `name` in the catalog (default: from the files, such as Amy)")
	fs.StringVar(&f.gender, "gender", "", "female or male (a Piper voice's files do not say; a Kokoro voice's name does)")
	fs.StringVar(&f.language, "language", "", "`locale` such as en_US (default: from the files)")
	fs.StringVar(&f.speaker, "speaker", "", "a multi-speaker Piper voice's `speaker`; for Kokoro, install only this voice (such as af_heart)")
	fs.StringVar(&f.license, "license", "", "the voice's `licence` (default: from the model card)")
	fs.StringVar(&f.card, "model-card", "", "the voice's model card `file`, whose licence line is shown by narrator voices")
	fs.IntVar(&f.priority, "priority", 0, "`rank` among its language's voices for the defaults: higher first; below 0, never a default")
	fs.StringVar(&f.library, "onnxruntime", getenv(config.EnvONNXRuntime), "the onnxruntime shared `library` that checks the model (env "+config.EnvONNXRuntime+")")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON instead of a table")
	config.SandboxFlag(fs, getenv, &f.sandbox)
	return fs
}

// describe turns the flags into what the operator says of a voice.
func (f *installFlags) describe() (neural.Describe, error) {
	d := neural.Describe{Name: f.name, Language: f.language, Speaker: f.speaker, License: f.license, Priority: f.priority}
	switch strings.ToLower(f.gender) {
	case "":
	case "female":
		d.Gender = narrator.GenderFemale
	case "male":
		d.Gender = narrator.GenderMale
	default:
		return d, usagef("--gender must be female or male, not %q", f.gender)
	}
	if d.License == "" && f.card != "" {
		card, err := os.Open(f.card)
		if err != nil {
			return d, fmt.Errorf("read the model card: %w", err)
		}
		defer card.Close()
		d.License = neural.ModelCardLicense(card)
	}
	return d, nil
}

// voicesInstallCommand is `narrator voices install`.
type voicesInstallCommand struct{ e *env }

// Run installs a voice from local files.
func (cmd voicesInstallCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	var f installFlags
	fs := installFlagSet(e, "voices install", "voices install [flags] MODEL.onnx [MODEL.onnx.json | VOICES.bin]", &f)
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 1 || len(rest) > 2 {
		return misuse(fs, "give the model, then its .onnx.json (Piper, default MODEL.onnx.json) or its voices file (Kokoro)")
	}
	second := rest[0] + ".json"
	if len(rest) == 2 {
		second = rest[1]
	}
	return installVoice(ctx, e, &f, rest[0], second)
}

// voicesDownloadCommand is `narrator voices download`.
type voicesDownloadCommand struct{ e *env }

// Run downloads a Piper voice and installs it.
func (cmd voicesDownloadCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	var f installFlags
	fs := installFlagSet(e, "voices download", "voices download [flags] NAME", &f)
	from := fs.String("from", neural.PiperVoicesURL, "the Piper voice repository, or a mirror with its layout (voices.json at its root)")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up on the download after this `long`")
	allowHTTP := fs.Bool("allow-insecure-mirror", false, "accept a --from mirror over plain http, and redirects to http: anyone on the way could change its index and files alike")
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return misuse(fs, "give one voice name, such as en_US-amy-medium")
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: time.Minute}}
	got, remove, err := downloadPiper(ctx, client, *from, fs.Arg(0), *timeout, neural.DownloadOptions{AllowHTTP: *allowHTTP})
	if errors.Is(err, neural.ErrInsecureRepository) {
		return usagef("voices download: %v: give an https mirror, or --allow-insecure-mirror to accept one over plain http", err)
	} else if err != nil {
		return fmt.Errorf("voices download: %w", err)
	}
	defer remove()
	if f.card == "" {
		f.card = got.Card
	}
	if err := installVoice(ctx, e, &f, got.Model, got.Config); err != nil {
		return err
	}
	// Where each file came from and what it was checked against: the digests are the mirror's
	// own word, which the operator may compare with the publisher's.
	for _, df := range got.Files {
		note := ""
		if !strings.Contains(df.Checked, "SHA-256") {
			note = "; the index gives no SHA-256: compare the one above with the publisher's"
		}
		fmt.Fprintf(e.stderr, "downloaded %s from %s, checked against the index's %s%s\n", filepath.Base(df.Path), df.URL, df.Checked, note)
	}
	return nil
}

// downloadPiper downloads the Piper voice name from the repository at from into a new
// temporary directory, giving up after timeout. Once the voice is installed, remove deletes
// the directory; on an error there is none.
func downloadPiper(ctx context.Context, client *http.Client, from, name string, timeout time.Duration, opts neural.DownloadOptions) (got neural.Downloaded, remove func(), err error) {
	dir, err := os.MkdirTemp("", "narrator-voice-")
	if err != nil {
		return neural.Downloaded{}, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if got, err = neural.Download(ctx, client, from, name, dir, opts); err != nil {
		os.RemoveAll(dir)
		return neural.Downloaded{}, nil, err
	}
	return got, func() { os.RemoveAll(dir) }, nil
}

// installVoice checks a voice's files, stores them in the media store and its catalog
// entries in the database, and prints the entries.
func installVoice(ctx context.Context, e *env, f *installFlags, modelPath, secondPath string) error {
	d, err := f.describe()
	if err != nil {
		return err
	}
	if f.library == "" {
		return usagef("voices install: %v", neural.ErrNoRuntime)
	}
	if err := config.ValidateSandbox(f.sandbox); err != nil {
		return usagef("voices install: %v", err)
	}
	b, err := f.data()
	if err != nil {
		return usagef("%v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	model, err := neural.HashFile(modelPath, narrator.VoiceFileModel)
	if err != nil {
		return usagef("voices install: %v", err)
	}
	// The model is untrusted until checked: onnxruntime reads it in a worker in the very
	// sandbox serve's engines run in, with this node's data directory, database and media
	// hidden, and with serve's refusal (--sandbox on) or warning (auto) where there is none.
	warnings := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sb, err := engineSandbox(ctx, f.sandbox, b, warnings)
	if err != nil {
		return fmt.Errorf("voices install: %w", err)
	}
	kind, info, err := neural.Inspect(ctx, worker.Config{Command: []string{exe, "onnx-worker"}, Library: f.library, Model: modelPath, Sandbox: sb})
	if err != nil {
		return fmt.Errorf("voices install: the model %s: %w", model.Name, err)
	}
	ready := piperInstall
	if kind == worker.Kokoro {
		ready = kokoroInstall
	}
	in, err := ready(e, info, model, secondPath, d)
	if in.tmp != "" {
		defer os.RemoveAll(in.tmp)
	}
	if err != nil {
		return err
	}
	entries, skipped, model, second := in.entries, in.skipped, in.model, in.second
	bk, err := openBackends(ctx, b, jobs.Config{Logger: slog.New(slog.DiscardHandler)}, cliEventBody(e.getenv), narrator.Limits{}, false, e.getenv)
	if err != nil {
		return err
	}
	defer bk.store.Close()
	cat, err := loadCatalog(ctx, bk.store)
	if err != nil {
		return err
	}
	for _, v := range entries {
		if err := cat.CheckInstall(v); err != nil {
			return usagef("voices install: %s", narrator.ErrorMessage(err))
		}
	}
	// The files first: an entry is only ever written once its files are stored.
	for _, lf := range []neural.LocalFile{model, second} {
		if err := putFile(ctx, bk.media, lf.Key(), lf.Path); err != nil {
			return err
		}
	}
	for _, v := range entries {
		if err := bk.store.InstallVoice(ctx, v); err != nil {
			if narrator.ErrorCode(err) == narrator.ECONFLICT || narrator.ErrorCode(err) == narrator.EINVALID {
				return usagef("voices install: %s", narrator.ErrorMessage(err))
			}
			return fmt.Errorf("voices install: %w", err)
		}
	}
	for _, s := range skipped {
		fmt.Fprintln(e.stderr, "skipped", s)
	}
	return printInstalled(e, entries, f.asJSON)
}

// installed is what a voice's files install: its entries, the voices its files have that
// Narrator cannot speak, and the files to store, which may be made in a temporary
// directory, tmp, that the caller removes.
type installed struct {
	entries       []*narrator.InstalledVoice
	skipped       []string
	model, second neural.LocalFile
	tmp           string
}

// piperInstall readies a Piper voice's files: its config, and its model as a copy that also
// gives each phoneme's length, for word timings (the operator's file stays as it is), or as
// it is, with a note, if it cannot.
func piperInstall(e *env, info worker.Info, model neural.LocalFile, configPath string, d neural.Describe) (installed, error) {
	in := installed{model: model}
	sig, err := info.Piper()
	if err != nil {
		return in, fmt.Errorf("voices install: %w", err)
	}
	if in.second, err = neural.HashFile(configPath, narrator.VoiceFileConfig); err != nil {
		return in, usagef("voices install: a Piper voice needs its config: %v", err)
	}
	v, err := neural.PiperEntry(model, in.second, sig, d)
	if err != nil {
		return in, usagef("voices install: %v", err)
	}
	timed, err := timedModel(model)
	switch {
	case errors.Is(err, neural.ErrNotAlignable):
		fmt.Fprintf(e.stderr, "%s: %v\n", model.Name, err)
		in.model.Name = narrator.TimedModelName(model.Name, false)
	case err != nil:
		return in, fmt.Errorf("voices install: %w", err)
	default:
		in.tmp, in.model = filepath.Dir(timed.Path), timed
	}
	v.Files[0] = in.model.VoiceFile
	in.entries = []*narrator.InstalledVoice{v}
	return in, nil
}

// kokoroInstall readies a Kokoro model's voices. A timestamped export gives its tokens'
// durations: its name says so (narrator.TimedModelName), for the catalog. Others keep
// sentence timings, with a note.
func kokoroInstall(e *env, info worker.Info, model neural.LocalFile, stylesPath string, d neural.Describe) (installed, error) {
	in := installed{model: model}
	sig, err := info.Kokoro()
	if err != nil {
		return in, fmt.Errorf("voices install: %w", err)
	}
	in.model.Name = narrator.TimedModelName(model.Name, sig.Durations != "")
	if sig.Durations == "" {
		fmt.Fprintf(e.stderr, "%s: the model gives no durations (a timestamped export does): its voices keep sentence timings\n", model.Name)
	}
	if in.second, err = neural.HashFile(stylesPath, narrator.VoiceFileStyles); err != nil {
		return in, usagef("voices install: a Kokoro model needs its voices file (voices-v1.0.bin, or one voice's .bin): %v", err)
	}
	if in.entries, in.skipped, err = neural.KokoroEntries(in.model, in.second, d); err != nil {
		return in, usagef("voices install: %v", err)
	}
	return in, nil
}

// timedModel writes a copy of a Piper model with its durations as an output (see
// neural.MarkDurations), named with narrator.TimedModelSuffix, in a new temporary directory
// that the caller removes. A model with no Ceil node, or several, gives an error matching
// neural.ErrNotAlignable.
func timedModel(model neural.LocalFile) (neural.LocalFile, error) {
	b, err := os.ReadFile(model.Path)
	if err != nil {
		return neural.LocalFile{}, err
	}
	patched, _, err := neural.MarkDurations(b)
	if err != nil {
		return neural.LocalFile{}, err
	}
	dir, err := os.MkdirTemp("", "narrator-timed-")
	if err != nil {
		return neural.LocalFile{}, err
	}
	path := filepath.Join(dir, narrator.TimedModelName(model.Name, true))
	if err := os.WriteFile(path, patched, 0o600); err != nil {
		os.RemoveAll(dir)
		return neural.LocalFile{}, err
	}
	lf, err := neural.HashFile(path, narrator.VoiceFileModel)
	if err != nil {
		os.RemoveAll(dir)
		return neural.LocalFile{}, err
	}
	return lf, nil
}

// parseWithArgs parses flags that come before a command's arguments.
func parseWithArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// putFile stores a local file in the media store.
func putFile(ctx context.Context, media mediaStore, key, path string) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := media.Put(ctx, key, r); err != nil {
		return fmt.Errorf("store %s in the media store: %w", path, err)
	}
	return nil
}

// printInstalled prints installed voices' entries, and their files with their SHA-256: what
// was installed, as it was installed.
func printInstalled(e *env, vs []*narrator.InstalledVoice, asJSON bool) error {
	type fileJSON struct {
		Role   string `json:"role"`
		Name   string `json:"name"`
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	}
	type entryJSON struct {
		ID       string     `json:"id"`
		Name     string     `json:"name"`
		Label    string     `json:"label"`
		Language string     `json:"language"`
		Engine   string     `json:"engine"`
		Quality  string     `json:"quality,omitempty"`
		License  string     `json:"license,omitempty"`
		Speaker  string     `json:"speaker,omitempty"`
		Priority int        `json:"priority"`
		Words    bool       `json:"word_timings"`
		Files    []fileJSON `json:"files"`
	}
	out := make([]entryJSON, 0, len(vs))
	var files []narrator.VoiceFile // each once: a Kokoro model's voices share theirs
	seen := map[string]bool{}
	for _, v := range vs {
		entry := entryJSON{v.EngineVoice, v.Name, v.Label(), v.Language, v.Engine, v.Quality, v.License, v.Speaker, v.Priority, v.WordTimings(), nil}
		for _, f := range v.Files {
			entry.Files = append(entry.Files, fileJSON{f.Role, f.Name, f.Size, f.SHA256})
			if !seen[f.SHA256] {
				seen[f.SHA256] = true
				files = append(files, f)
			}
		}
		out = append(out, entry)
	}
	if asJSON {
		return printJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTALLED\tVOICE\tLANGUAGE\tENGINE\tQUALITY\tLICENCE\tWORD TIMINGS")
	for _, v := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Label, v.Language, v.Engine, dash(v.Quality), dash(v.License), timingsWord(v.Words))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nFILE\tBYTES\tSHA-256")
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", f.Name, f.Size, f.SHA256)
	}
	return tw.Flush()
}

// voicesRemoveCommand is `narrator voices remove`.
type voicesRemoveCommand struct{ e *env }

// Run removes an installed voice.
func (cmd voicesRemoveCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "voices remove", "voices remove [--data DIR|--database URL] ID")
	data := config.BackendFlags(fs, e.getenv)
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return misuse(fs, "give one installed voice's ID (narrator voices shows them)")
	}
	return useStore(ctx, e, data, func(bk *backends) error {
		v, err := bk.store.RemoveVoice(ctx, fs.Arg(0))
		if narrator.ErrorCode(err) == narrator.ENOTFOUND {
			return usagef("voices remove: %s", narrator.ErrorMessage(err))
		} else if err != nil {
			return fmt.Errorf("voices remove: %w", err)
		}
		left, err := bk.store.ListInstalledVoices(ctx)
		if err != nil {
			return fmt.Errorf("voices remove: %w", err)
		}
		// Projects that chose the voice fall back to their language's default; the files no
		// voice uses any more are deleted.
		var errs []error
		for _, f := range narrator.UnusedVoiceFiles(v, left) {
			if err := bk.media.DeletePrefix(ctx, f.Key()); err != nil {
				errs = append(errs, fmt.Errorf("delete %s: %w", f.Name, err))
			}
		}
		fmt.Fprintf(e.stdout, "removed %s (%s, %s); projects that chose it now speak with their language's default\n", v.EngineVoice, v.Label(), v.Language)
		return errors.Join(errs...)
	})
}
