package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/extract"
	fetcher "github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/httpapi"
	"github.com/narrator/narrator/internal/source"
)

const sourcesUsage = `Usage:
  narrator sources add    [--data DIR|--database URL] --project ID --url URL [--header 'Name: value']... [--map field=item]...
                          [--full-text] [--backfill-items N] [--backfill-days D] [--interval 10m]
  narrator sources list   [--data DIR|--database URL] --project ID
  narrator sources remove [--data DIR|--database URL] --project ID --id SOURCE_ID
  narrator sources poll   [--data DIR|--database URL] --project ID --id SOURCE_ID [--allow-private]

The sources an rss project narrates, feeds in RSS, Atom or JSON Feed: each
new item creates an audio, each changed item updates it. The first read
follows the backfill rule (default: the latest 10 items). A running server
reads each source every --interval; poll reads one now, from this process.
"narrator feeds" is a deprecated alias, gone in the release after next.
Mapping fields: external_id, title, body, author, article_url; item fields:
guid, link, title, content, summary, author.`

// sourcesCommand is `narrator sources`.
func sourcesCommand(e *env) group {
	return group{e: e, name: "sources", usage: sourcesUsage, subs: []namedCommand{
		{name: "add", command: sourcesAddCommand{e}},
		{name: "list", command: sourcesListCommand{e}},
		{name: "remove", command: sourcesRemoveCommand{e}},
		{name: "poll", command: sourcesPollCommand{e}},
	}}
}

// pairs is a repeatable flag of "key<sep>value" pairs.
type pairs struct {
	sep string
	m   map[string]string
}

// String implements flag.Value.
func (p *pairs) String() string { return "" }

// Set implements flag.Value.
func (p *pairs) Set(v string) error {
	k, val, ok := strings.Cut(v, p.sep)
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not of the form key%svalue", v, p.sep)
	}
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.m[strings.TrimSpace(k)] = strings.TrimSpace(val)
	return nil
}

// sourcesAddCommand is `narrator sources add`.
type sourcesAddCommand struct{ e *env }

// Run adds a source and prints it.
func (cmd sourcesAddCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "sources add")
	url := f.fs.String("url", "", "the feed's http or https `URL` (required)")
	headers := &pairs{sep: ":"}
	f.fs.Var(headers, "header", "a request `header` 'Name: value' sent with each read (repeatable)")
	mapping := &pairs{sep: "="}
	f.fs.Var(mapping, "map", "map an audio `field=item` field (repeatable), e.g. body=summary")
	fullText := f.fs.Bool("full-text", false, "read each item's text from its article page")
	backfillItems := f.fs.Int("backfill-items", 0, "the first read narrates at most the latest `N` items")
	backfillDays := f.fs.Float64("backfill-days", 0, "the first read narrates only items of the last `D` days")
	interval := f.fs.Duration("interval", narrator.DefaultPollInterval, "how often the feed is read (1m to 24h)")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	src := narrator.NewSource(*f.project, *url)
	src.Header, src.Mapping, src.FullText = headers.m, mapping.m, *fullText
	src.BackfillItems, src.BackfillSince = *backfillItems, time.Duration(*backfillDays*float64(24*time.Hour))
	src.Interval = *interval
	if err := src.Validate(); err != nil {
		return usagef("sources add: %s", narrator.ErrorMessage(err))
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		if err := st.CreateSource(ctx, src); err != nil {
			return nil, fmt.Errorf("sources add: %w", err)
		}
		return httpapi.SourceJSON(src), nil
	})
}

// sourcesListCommand is `narrator sources list`.
type sourcesListCommand struct{ e *env }

// Run prints the project's sources with what their reads found.
func (cmd sourcesListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "sources list")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		list, err := st.ListSources(ctx, *f.project)
		if err != nil {
			return nil, fmt.Errorf("sources list: %w", err)
		}
		out := make([]any, 0, len(list))
		for _, src := range list {
			out = append(out, httpapi.SourceJSON(src))
		}
		return out, nil
	})
}

// sourcesRemoveCommand is `narrator sources remove`.
type sourcesRemoveCommand struct{ e *env }

// Run removes a source, keeping its audios, and prints it.
func (cmd sourcesRemoveCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "sources remove")
	id := f.fs.Int64("id", 0, "source `id` (required)")
	if err := f.parse(args, id); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		src, err := st.FindSource(ctx, *f.project, *id)
		if err == nil {
			err = st.DeleteSource(ctx, *f.project, *id)
		}
		if err != nil {
			return nil, fmt.Errorf("sources remove: %w", err)
		}
		return httpapi.SourceJSON(src), nil
	})
}

// sourcesPollCommand is `narrator sources poll`.
type sourcesPollCommand struct{ e *env }

// Run reads a source now and prints it with the state the read left.
func (cmd sourcesPollCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "sources poll")
	id := f.fs.Int64("id", 0, "source `id` (required)")
	allowPrivate := f.fs.Bool("allow-private", false, "let the read reach loopback and private addresses (for a feed on this machine)")
	if err := f.parse(args, id); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		if _, err := st.FindSource(ctx, *f.project, *id); err != nil {
			return nil, fmt.Errorf("sources poll: %w", err)
		}
		client := fetcher.New(fetcher.Options{AllowPrivate: *allowPrivate})
		p := source.New(st, source.Options{Client: client, Pages: extract.NewReader(client)})
		src, err := p.Poll(ctx, *id)
		if err != nil {
			return nil, fmt.Errorf("sources poll: %w", err)
		}
		return httpapi.SourceJSON(src), nil
	})
}
