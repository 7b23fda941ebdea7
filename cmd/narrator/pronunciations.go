package main

import (
	"context"
	"fmt"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
)

const pronunciationsUsage = `Usage:
  narrator pronunciations add    [--data DIR|--database URL] --project ID --phrase WORD --say RESPELLING [--resynthesize]
  narrator pronunciations list   [--data DIR|--database URL] --project ID
  narrator pronunciations remove [--data DIR|--database URL] --project ID --id RULE_ID [--resynthesize]

--resynthesize queues the project's audios that contain the phrase for synthesis again.`

// pronunciationOut is how the CLI prints a rule.
type pronunciationOut struct {
	ID            int64     `json:"id"`
	ProjectID     int64     `json:"project_id"`
	Phrase        string    `json:"phrase"`
	Say           string    `json:"say"`
	CreatedAt     time.Time `json:"created_at"`
	Resynthesized *[]int64  `json:"resynthesized_audio_ids,omitempty"`
}

func runPronunciations(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, pronunciationsUsage)
		return usagef("pronunciations: missing subcommand")
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet(e, "pronunciations "+sub, "pronunciations "+sub+" [--data DIR|--database URL] --project ID ...")
	data := config.BackendFlags(fs, e.getenv)
	project := fs.Int64("project", 0, "project `id` (required)")
	var phrase, say *string
	var id *int64
	var again *bool
	switch sub {
	case "add":
		phrase = fs.String("phrase", "", "the word or phrase, matched whole and in any letter case (required)")
		say = fs.String("say", "", "how to say it: a respelling such as \"engine x\" (required)")
		again = fs.Bool("resynthesize", false, "synthesise the audios that contain the phrase again")
	case "remove":
		id = fs.Int64("id", 0, "rule `id` (required)")
		again = fs.Bool("resynthesize", false, "synthesise the audios that contain the phrase again")
	case "list":
	default:
		fmt.Fprintln(e.stderr, pronunciationsUsage)
		return usagef("pronunciations: unknown subcommand %q", sub)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *project <= 0 {
		fs.Usage()
		return usagef("pronunciations %s: --project is required", sub)
	}
	if id != nil && *id <= 0 {
		fs.Usage()
		return usagef("pronunciations remove: --id is required")
	}
	st, err := openStore(ctx, e, data)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		rules, err := st.ListPronunciations(ctx, *project)
		if err != nil {
			return err
		}
		out := make([]pronunciationOut, 0, len(rules))
		for _, r := range rules {
			out = append(out, pronunciationOut{ID: r.ID, ProjectID: r.ProjectID, Phrase: r.Phrase, Say: r.Say, CreatedAt: r.CreatedAt})
		}
		return printJSON(e.stdout, out)
	case "add":
		rule := &narrator.Pronunciation{ProjectID: *project, Phrase: *phrase, Say: *say}
		if err := st.SetPronunciation(ctx, rule); err != nil {
			switch narrator.ErrorCode(err) {
			case narrator.EINVALID:
				return usagef("pronunciations add: %s", narrator.ErrorMessage(err))
			case narrator.ECONFLICT: // the project has as many rules as allowed
				return fmt.Errorf("pronunciations add: %s", narrator.ErrorMessage(err))
			}
			return fmt.Errorf("pronunciations add: %w", err)
		}
		return printRuleChange(ctx, e, st, rule, *again)
	default: // remove
		rule, err := st.RemovePronunciation(ctx, *project, *id)
		if err != nil {
			return fmt.Errorf("pronunciations remove: %w", err)
		}
		return printRuleChange(ctx, e, st, rule, *again)
	}
}

// printRuleChange re-queues the audios with the rule's phrase when asked,
// and prints the rule.
func printRuleChange(ctx context.Context, e *env, st dataStore, rule *narrator.Pronunciation, again bool) error {
	out := pronunciationOut{ID: rule.ID, ProjectID: rule.ProjectID, Phrase: rule.Phrase, Say: rule.Say, CreatedAt: rule.CreatedAt}
	ids := []int64{}
	if again {
		var err error
		if ids, err = st.ResynthesizeMatching(ctx, rule.ProjectID, rule); err != nil {
			return fmt.Errorf("resynthesize audios with %q: %w", rule.Phrase, err)
		}
	}
	out.Resynthesized = &ids
	return printJSON(e.stdout, out)
}
