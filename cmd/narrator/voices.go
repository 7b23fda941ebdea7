package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

// voiceStore keeps the installed voices.
type voiceStore interface {
	InstallVoice(ctx context.Context, v *narrator.InstalledVoice) error
	ListInstalledVoices(ctx context.Context) ([]*narrator.InstalledVoice, error)
	RemoveVoice(ctx context.Context, id string) (*narrator.InstalledVoice, error)
}

// loadCatalog returns the catalog of the built-in voices and those
// installed in st.
func loadCatalog(ctx context.Context, st voiceStore) (*narrator.Catalog, error) {
	vs, err := st.ListInstalledVoices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the installed voices: %w", err)
	}
	return narrator.NewCatalog(vs), nil
}

const voicesUsage = `Usage: narrator voices [list] [flags]           list the voices, built in and installed
       narrator voices install [flags] MODEL.onnx [MODEL.onnx.json | VOICES.bin]
                                              install a Piper voice, or a Kokoro model's voices
       narrator voices download [flags] NAME  fetch a Piper voice (such as en_US-amy-medium) and install it
       narrator voices remove [flags] ID      remove an installed voice
       narrator voices setup-default [flags]  install a language's recommended neural voice if its
                                              repository answers soon; else say how to add one later

Run 'narrator voices SUBCOMMAND -h' for its flags.`

// voicesCommand is `narrator voices`: with no subcommand, or with flags first, it lists the
// voices.
type voicesCommand struct{ e *env }

// Run runs the subcommand args[0] names, or lists the voices.
func (cmd voicesCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	if len(args) > 0 {
		subs := []namedCommand{
			{"list", nil, "", voicesListCommand{e}},
			{"install", nil, "", voicesInstallCommand{e}},
			{"download", nil, "", voicesDownloadCommand{e}},
			{"remove", nil, "", voicesRemoveCommand{e}},
			{"setup-default", nil, "", voicesSetupCommand{e}},
		}
		if c := find(subs, args[0]); c != nil {
			return c.Run(ctx, args[1:])
		}
		if args[0] == "help" {
			fmt.Fprintln(e.stdout, voicesUsage)
			return nil
		}
		if !strings.HasPrefix(args[0], "-") {
			fmt.Fprintln(e.stderr, voicesUsage)
			return usagef("voices: unknown subcommand %q", args[0])
		}
	}
	return voicesListCommand{e}.Run(ctx, args)
}

// timingsWord says what a voice's transcripts time: "yes" (each word) or "sentence only".
func timingsWord(words bool) string {
	if words {
		return "yes"
	}
	return "sentence only"
}

// voicesListCommand is `narrator voices list`.
type voicesListCommand struct{ e *env }

// Run lists the voices, built in and installed.
func (cmd voicesListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "voices", "voices [list] [--language xx_XX] [--json] [--data DIR|--database URL]")
	data := config.BackendFlags(fs, e.getenv)
	language := fs.String("language", "", "only this `locale`'s voices")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	var cat *narrator.Catalog
	if err := useStore(ctx, e, data, func(bk *backends) (err error) {
		cat, err = loadCatalog(ctx, bk.store)
		return err
	}); err != nil {
		return err
	}
	var voices []narrator.Voice
	for _, v := range cat.Voices() {
		if *language == "" || v.Language == *language {
			voices = append(voices, v)
		}
	}
	if len(voices) == 0 {
		return usagef("voices: no voices for language %q; run `narrator voices` for the list", *language)
	}
	type voiceJSON struct {
		Name        string `json:"name"`
		Label       string `json:"label"`
		Gender      string `json:"gender"`
		Language    string `json:"language"`
		Engine      string `json:"engine"`
		EngineVoice string `json:"engine_voice"`
		Neural      bool   `json:"neural"`
		Quality     string `json:"quality,omitempty"`
		License     string `json:"license,omitempty"`
		Default     string `json:"default,omitempty"`
		WordTimings bool   `json:"word_timings"`
	}
	out := make([]voiceJSON, 0, len(voices))
	for _, v := range voices {
		out = append(out, voiceJSON{v.Name, v.Label(), v.Gender, v.Language, v.Engine, v.EngineVoice, narrator.Neural(v.Engine), v.Quality, v.License, defaultRole(cat, v), cat.WordTimings(v)})
	}
	if *asJSON {
		return printJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LANGUAGE\tVOICE\tGENDER\tENGINE\tQUALITY\tLICENCE\tWORD TIMINGS\tDEFAULT FOR")
	for _, v := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\n", v.Language, v.Name, v.Gender, v.Engine, v.EngineVoice, dash(v.Quality), dash(v.License), timingsWord(v.WordTimings), v.Default)
	}
	return tw.Flush()
}

// dash shows an empty column as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// defaultRole says which defaults of its language a voice is.
func defaultRole(cat *narrator.Catalog, v narrator.Voice) string {
	title, body, _ := cat.Defaults(v.Language)
	switch {
	case title.Name == v.Name && body.Name == v.Name:
		return "title, body"
	case title.Name == v.Name:
		return "title"
	case body.Name == v.Name:
		return "body"
	}
	return ""
}
