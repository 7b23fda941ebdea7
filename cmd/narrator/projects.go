package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
	"github.com/narrator/narrator/internal/httpapi"
)

const projectsUsage = `Usage:
  narrator projects create [--data DIR|--database URL] --account ID --title T --language xx_XX [--type api|rss] [--url U] [--title-voice NAME] [--body-voice NAME] [--speech-rate R]
  narrator projects set [--data DIR|--database URL] --project ID [--speech-rate R] [--intro FILE|--intro-text T [--intro-voice V]|--no-intro] [--outro FILE|--outro-text T [--outro-voice V]|--no-outro]
  narrator projects list [--data DIR|--database URL] [--account ID]
  narrator projects resynthesize [--data DIR|--database URL] ID`

// projectsCommand is `narrator projects`.
func projectsCommand(e *env) group {
	return group{e: e, name: "projects", usage: projectsUsage, subs: []namedCommand{
		{name: "create", command: projectsCreateCommand{e}},
		{name: "set", command: projectsSetCommand{e}},
		{name: "list", command: projectsListCommand{e}},
		{name: "resynthesize", command: projectsResynthesizeCommand{e}},
	}}
}

// projectsCreateCommand is `narrator projects create`.
type projectsCreateCommand struct{ e *env }

// Run runs `narrator projects create`.
func (cmd projectsCreateCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "projects create", "projects create [--data DIR|--database URL] --account ID --title T --language xx_XX [--type api|rss] [--url U] [--title-voice NAME] [--body-voice NAME] [--speech-rate R]")
	data := config.BackendFlags(fs, e.getenv)
	account := fs.Int64("account", 0, "account `id` (required)")
	title := fs.String("title", "", "project `title` (required)")
	language := fs.String("language", "", "`locale` such as en_US (required; see `narrator voices`)")
	typ := fs.String("type", narrator.ProjectTypeAPI, "project `type`: api, or rss for a project that narrates its sources (see `narrator sources`)")
	url := fs.String("url", "", "the publication's `URL`")
	titleVoice := fs.String("title-voice", "", "voice `name` for titles (default: the language's title voice)")
	bodyVoice := fs.String("body-voice", "", "voice `name` for bodies (default: the language's body voice)")
	rate := fs.Float64("speech-rate", narrator.DefaultSpeechRate, speechRateHelp)
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *account <= 0:
		return required(fs, "account")
	case strings.TrimSpace(*title) == "":
		return required(fs, "title")
	case *language == "":
		return required(fs, "language")
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		cat, err := loadCatalog(ctx, st)
		if err != nil {
			return nil, err
		}
		defTitle, defBody, ok := cat.Defaults(*language)
		if !ok {
			return nil, usagef("projects create: language %q is not supported; run `narrator voices` for the list", *language)
		}
		p := &narrator.Project{
			AccountID:  *account,
			Title:      *title,
			Type:       *typ,
			Language:   *language,
			URL:        *url,
			SpeechRate: *rate,
		}
		for _, v := range []struct {
			flag string
			arg  string
			def  narrator.Voice
			dst  *string
		}{{"--title-voice", *titleVoice, defTitle, &p.TitleVoice}, {"--body-voice", *bodyVoice, defBody, &p.BodyVoice}} {
			if v.arg == "" {
				*v.dst = v.def.Name
				continue
			}
			voice, ok := cat.Lookup(*language, v.arg)
			if !ok {
				return nil, usagef("projects create: %s %q is not a voice of %s; run `narrator voices --language %s`", v.flag, v.arg, *language, *language)
			}
			*v.dst = voice.Name
		}
		if err := st.CreateProject(ctx, p); err != nil {
			if narrator.ErrorCode(err) == narrator.ENOTFOUND {
				return nil, fmt.Errorf("projects create: account %d does not exist", *account)
			}
			if narrator.ErrorCode(err) == narrator.EINVALID {
				return nil, usagef("projects create: %s", narrator.ErrorMessage(err))
			}
			return nil, fmt.Errorf("create project: %w", err)
		}
		return httpapi.ProjectSettingsJSON(cat, p), nil
	})
}

// speechRateHelp describes the --speech-rate flag.
const speechRateHelp = "speaking-rate `factor` from 0.5 to 2.0 for the project's renderings; 1 is each voice's own pace"

// projectsListCommand is `narrator projects list`.
type projectsListCommand struct{ e *env }

// Run runs `narrator projects list`.
func (cmd projectsListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	fs := newFlagSet(e, "projects list", "projects list [--data DIR|--database URL] [--account ID]")
	data := config.BackendFlags(fs, e.getenv)
	account := fs.Int64("account", 0, "only this account's projects")
	if err := parse(fs, args); err != nil {
		return err
	}
	return withStore(ctx, e, data, func(st dataStore) (any, error) {
		projects, err := st.ListProjects(ctx, *account)
		if err != nil {
			return nil, fmt.Errorf("list projects: %w", err)
		}
		cat, err := loadCatalog(ctx, st)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(projects))
		for _, p := range projects {
			out = append(out, httpapi.ProjectSettingsJSON(cat, p))
		}
		return out, nil
	})
}
