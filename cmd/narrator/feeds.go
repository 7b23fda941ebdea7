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

const feedsUsage = `Usage:
  narrator feeds add    [--data DIR|--database URL] --project ID --url URL [--header 'Name: value']... [--map field=item]...
                        [--full-text] [--backfill-items N] [--backfill-days D] [--interval 10m]
  narrator feeds list   [--data DIR|--database URL] --project ID
  narrator feeds remove [--data DIR|--database URL] --project ID --id FEED_ID
  narrator feeds poll   [--data DIR|--database URL] --project ID --id FEED_ID [--allow-private]

The feeds (RSS, Atom, JSON Feed) an rss project narrates: each new item
creates an audio, each changed item updates it. The first read follows the
backfill rule (default: the latest 10 items). A running server reads each
feed every --interval; poll reads one now, from this process.
Mapping fields: external_id, title, body, author, article_url; item fields:
guid, link, title, content, summary, author.`

// feedsCommand is `narrator feeds`.
func feedsCommand(e *env) group {
	return group{e: e, name: "feeds", usage: feedsUsage, subs: []namedCommand{
		{name: "add", command: feedsAddCommand{e}},
		{name: "list", command: feedsListCommand{e}},
		{name: "remove", command: feedsRemoveCommand{e}},
		{name: "poll", command: feedsPollCommand{e}},
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

// feedsAddCommand is `narrator feeds add`.
type feedsAddCommand struct{ e *env }

// Run adds a feed and prints it.
func (cmd feedsAddCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "feeds add")
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
		return usagef("feeds add: %s", narrator.ErrorMessage(err))
	}
	st, err := openStore(ctx, e, f.data)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.CreateSource(ctx, src); err != nil {
		return fmt.Errorf("feeds add: %w", err)
	}
	return printJSON(e.stdout, httpapi.SourceJSON(src))
}

// feedsListCommand is `narrator feeds list`.
type feedsListCommand struct{ e *env }

// Run prints the project's feeds with what their reads found.
func (cmd feedsListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "feeds list")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	st, err := openStore(ctx, e, f.data)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.ListSources(ctx, *f.project)
	if err != nil {
		return fmt.Errorf("feeds list: %w", err)
	}
	out := make([]any, 0, len(list))
	for _, src := range list {
		out = append(out, httpapi.SourceJSON(src))
	}
	return printJSON(e.stdout, out)
}

// feedsRemoveCommand is `narrator feeds remove`.
type feedsRemoveCommand struct{ e *env }

// Run removes a feed, keeping its audios, and prints it.
func (cmd feedsRemoveCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "feeds remove")
	id := f.fs.Int64("id", 0, "feed `id` (required)")
	if err := f.parse(args, id); err != nil {
		return err
	}
	st, err := openStore(ctx, e, f.data)
	if err != nil {
		return err
	}
	defer st.Close()
	src, err := projectSource(ctx, st, *f.project, *id)
	if err == nil {
		err = st.DeleteSource(ctx, *f.project, *id)
	}
	if err != nil {
		return fmt.Errorf("feeds remove: %w", err)
	}
	return printJSON(e.stdout, httpapi.SourceJSON(src))
}

// feedsPollCommand is `narrator feeds poll`.
type feedsPollCommand struct{ e *env }

// Run reads a feed now and prints it with the state the read left.
func (cmd feedsPollCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "feeds poll")
	id := f.fs.Int64("id", 0, "feed `id` (required)")
	allowPrivate := f.fs.Bool("allow-private", false, "let the read reach loopback and private addresses (for a feed on this machine)")
	if err := f.parse(args, id); err != nil {
		return err
	}
	st, err := openStore(ctx, e, f.data)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := projectSource(ctx, st, *f.project, *id); err != nil {
		return fmt.Errorf("feeds poll: %w", err)
	}
	client := fetcher.New(fetcher.Options{AllowPrivate: *allowPrivate})
	p := source.New(st, source.Options{Client: client, Pages: extract.NewReader(client)})
	src, err := p.Poll(ctx, *id)
	if err != nil {
		return fmt.Errorf("feeds poll: %w", err)
	}
	return printJSON(e.stdout, httpapi.SourceJSON(src))
}

// projectSource returns a project's feed; ENOTFOUND if the project has no
// such feed.
func projectSource(ctx context.Context, st dataStore, project, id int64) (*narrator.Source, error) {
	src, err := st.Source(ctx, id)
	if err != nil {
		return nil, err
	}
	if src.ProjectID != project {
		return nil, narrator.Errorf(narrator.ENOTFOUND, "feed %d not found in project %d", id, project)
	}
	return src, nil
}
