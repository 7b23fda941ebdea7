package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

const pronunciationsUsage = `Usage:
  narrator pronunciations add    [--data DIR|--database URL] --project ID --phrase WORD --say RESPELLING [--resynthesize]
  narrator pronunciations list   [--data DIR|--database URL] --project ID
  narrator pronunciations remove [--data DIR|--database URL] --project ID --id RULE_ID [--resynthesize]

--resynthesize queues a background job (worked by a running server) that re-queues the
project's audios that contain the phrase, within the account's limits; one per project at a time.`

// pronunciationOut is how the CLI prints a rule.
type pronunciationOut struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	Phrase      string    `json:"phrase"`
	Say         string    `json:"say"`
	CreatedAt   time.Time `json:"created_at"`
	Resynthesis string    `json:"resynthesis,omitempty"`
}

// pronunciationsCommand is `narrator pronunciations`.
func pronunciationsCommand(e *env) group {
	return group{e: e, name: "pronunciations", usage: pronunciationsUsage, subs: []namedCommand{
		{name: "add", command: pronunciationsAddCommand{e}},
		{name: "remove", command: pronunciationsRemoveCommand{e}},
		{name: "list", command: pronunciationsListCommand{e}},
	}}
}

// projectFlags are the flags of every pronunciations and webhooks
// subcommand: where the data is, and the project.
type projectFlags struct {
	fs      *flag.FlagSet
	data    func() (config.Backends, error)
	project *int64
}

// newProjectFlags returns the flag set of the subcommand name, such as
// "webhooks add", with its project flags.
func newProjectFlags(e *env, name string) projectFlags {
	fs := newFlagSet(e, name, name+" [--data DIR|--database URL] --project ID ...")
	return projectFlags{fs: fs, data: config.BackendFlags(fs, e.getenv), project: fs.Int64("project", 0, "project `id` (required)")}
}

// parse parses args and checks that --project, and --id unless id is nil,
// are given.
func (f projectFlags) parse(args []string, id *int64) error {
	if err := parse(f.fs, args); err != nil {
		return err
	}
	if *f.project <= 0 {
		return required(f.fs, "project")
	}
	if id != nil && *id <= 0 {
		return required(f.fs, "id")
	}
	return nil
}

// pronunciationsListCommand is `narrator pronunciations list`.
type pronunciationsListCommand struct{ e *env }

// Run prints the project's rules.
func (cmd pronunciationsListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "pronunciations list")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		rules, err := st.ListPronunciations(ctx, *f.project)
		if err != nil {
			return nil, err
		}
		out := make([]pronunciationOut, 0, len(rules))
		for _, r := range rules {
			out = append(out, pronunciationOut{ID: r.ID, ProjectID: r.ProjectID, Phrase: r.Phrase, Say: r.Say, CreatedAt: r.CreatedAt})
		}
		return out, nil
	})
}

// pronunciationsAddCommand is `narrator pronunciations add`.
type pronunciationsAddCommand struct{ e *env }

// Run adds or replaces a rule and prints it.
func (cmd pronunciationsAddCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "pronunciations add")
	phrase := f.fs.String("phrase", "", "the word or phrase, matched whole and in any letter case (required)")
	say := f.fs.String("say", "", "how to say it: a respelling such as \"engine x\" (required)")
	again := f.fs.Bool("resynthesize", false, "synthesise the audios that contain the phrase again")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	return withBackends(ctx, e, f.data, func(bk *backends) (any, error) {
		st := bk.store
		rule := &narrator.Pronunciation{ProjectID: *f.project, Phrase: *phrase, Say: *say}
		if err := st.SetPronunciation(ctx, rule); err != nil {
			switch narrator.ErrorCode(err) {
			case narrator.EINVALID:
				return nil, usagef("pronunciations add: %s", narrator.ErrorMessage(err))
			case narrator.ECONFLICT: // the project has as many rules as allowed
				return nil, fmt.Errorf("pronunciations add: %s", narrator.ErrorMessage(err))
			}
			return nil, fmt.Errorf("pronunciations add: %w", err)
		}
		return ruleChange(ctx, bk.queue, rule, *again)
	})
}

// pronunciationsRemoveCommand is `narrator pronunciations remove`.
type pronunciationsRemoveCommand struct{ e *env }

// Run removes a rule and prints it.
func (cmd pronunciationsRemoveCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "pronunciations remove")
	id := f.fs.Int64("id", 0, "rule `id` (required)")
	again := f.fs.Bool("resynthesize", false, "synthesise the audios that contain the phrase again")
	if err := f.parse(args, id); err != nil {
		return err
	}
	return withBackends(ctx, e, f.data, func(bk *backends) (any, error) {
		st := bk.store
		rule, err := st.RemovePronunciation(ctx, *f.project, *id)
		if err != nil {
			return nil, fmt.Errorf("pronunciations remove: %w", err)
		}
		return ruleChange(ctx, bk.queue, rule, *again)
	})
}

// ruleChange queues the resynthesis of the audios with the rule's phrase
// when asked (a running server works it), and returns the rule to print. A
// resynthesis already under way for the project is an error, after the
// rule was changed.
func ruleChange(ctx context.Context, q jobQueue, rule *narrator.Pronunciation, again bool) (pronunciationOut, error) {
	out := pronunciationOut{ID: rule.ID, ProjectID: rule.ProjectID, Phrase: rule.Phrase, Say: rule.Say, CreatedAt: rule.CreatedAt}
	if again {
		err := q.QueueResynthesis(ctx, narrator.ResynthesisJob{ProjectID: rule.ProjectID, Phrase: rule.Phrase})
		if narrator.ErrorCode(err) == narrator.ECONFLICT {
			return pronunciationOut{}, fmt.Errorf("the rule for %q was saved, but %s", rule.Phrase, narrator.ErrorMessage(err))
		}
		if err != nil {
			return pronunciationOut{}, fmt.Errorf("queue the resynthesis of audios with %q: %w", rule.Phrase, err)
		}
		out.Resynthesis = "queued"
	}
	return out, nil
}
