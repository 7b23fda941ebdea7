package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/narrator/narrator"
)

// voicesCommand is `narrator voices`.
type voicesCommand struct{ e *env }

// Run runs `narrator voices`.
func (cmd voicesCommand) Run(_ context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "voices", "voices [--language xx_XX] [--json]")
	language := fs.String("language", "", "only this `locale`'s voices")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	var voices []narrator.Voice
	for _, v := range narrator.Voices() {
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
		Default     string `json:"default,omitempty"`
	}
	out := make([]voiceJSON, 0, len(voices))
	for _, v := range voices {
		out = append(out, voiceJSON{v.Name, v.Label(), v.Gender, v.Language, v.Engine, v.EngineVoice, defaultRole(v)})
	}
	if *asJSON {
		return printJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LANGUAGE\tVOICE\tGENDER\tENGINE\tDEFAULT FOR")
	for _, v := range out {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\n", v.Language, v.Name, v.Gender, v.Engine, v.EngineVoice, v.Default)
	}
	return tw.Flush()
}

// defaultRole says which defaults of its language a voice is.
func defaultRole(v narrator.Voice) string {
	title, body, _ := narrator.DefaultVoices(v.Language)
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
