package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/httpapi"
)

const webhooksUsage = `Usage:
  narrator webhooks add           [--data DIR|--database URL] --project ID --url URL [--events audio.processed,...]
  narrator webhooks list          [--data DIR|--database URL] --project ID
  narrator webhooks remove        [--data DIR|--database URL] --project ID --id WEBHOOK_ID
  narrator webhooks test          [--data DIR|--database URL] --project ID --id WEBHOOK_ID
  narrator webhooks rotate-secret [--data DIR|--database URL] --project ID --id WEBHOOK_ID
  narrator webhooks enable        [--data DIR|--database URL] --project ID --id WEBHOOK_ID

add and rotate-secret print the endpoint's signing secret: it is shown only then.
test queues a webhook.test delivery, which a running server sends.
Events: audio.processed, audio.failed, audio.updated, audio.deleted (default: all).`

// webhooksCommand is `narrator webhooks`.
func webhooksCommand(e *env) group {
	return group{e: e, name: "webhooks", usage: webhooksUsage, subs: []namedCommand{
		{name: "add", command: webhooksAddCommand{e}},
		{name: "list", command: webhooksListCommand{e}},
		{name: "remove", command: webhookCommand{e, "remove", removeWebhook}},
		{name: "test", command: webhookCommand{e, "test", testWebhook}},
		{name: "rotate-secret", command: webhookCommand{e, "rotate-secret", rotateWebhookSecret}},
		{name: "enable", command: webhookCommand{e, "enable", enableWebhook}},
	}}
}

// webhooksAddCommand is `narrator webhooks add`.
type webhooksAddCommand struct{ e *env }

// Run adds an endpoint and prints it with its secret.
func (cmd webhooksAddCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "webhooks add")
	url := f.fs.String("url", "", "the endpoint's http or https `URL` (required)")
	events := f.fs.String("events", "", "comma-separated `events` to send (default all)")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	var list []string
	for _, ev := range strings.Split(*events, ",") {
		if ev = strings.TrimSpace(ev); ev != "" {
			list = append(list, ev)
		}
	}
	h, err := narrator.NewWebhook(*f.project, *url, list, time.Now())
	if err != nil {
		return usagef("webhooks add: %s", narrator.ErrorMessage(err))
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		if err := st.CreateWebhook(ctx, h); err != nil {
			return nil, fmt.Errorf("webhooks add: %w", err)
		}
		return httpapi.WebhookJSON(h, true), nil
	})
}

// webhooksListCommand is `narrator webhooks list`.
type webhooksListCommand struct{ e *env }

// Run prints the project's endpoints, without their secrets.
func (cmd webhooksListCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "webhooks list")
	if err := f.parse(args, nil); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		hooks, err := st.ListWebhooks(ctx, *f.project)
		if err != nil {
			return nil, fmt.Errorf("webhooks list: %w", err)
		}
		out := make([]any, 0, len(hooks))
		for _, h := range hooks {
			out = append(out, httpapi.WebhookJSON(h, false))
		}
		return out, nil
	})
}

// webhookCommand is a `narrator webhooks` subcommand that acts on one
// endpoint, named by --id: it runs do and prints what do returns.
type webhookCommand struct {
	e    *env
	name string
	do   func(ctx context.Context, st dataStore, project, id int64) (any, error)
}

// Run runs the subcommand.
func (cmd webhookCommand) Run(ctx context.Context, args []string) error {
	e := cmd.e
	f := newProjectFlags(e, "webhooks "+cmd.name)
	id := f.fs.Int64("id", 0, "webhook `id` (required)")
	if err := f.parse(args, id); err != nil {
		return err
	}
	return withStore(ctx, e, f.data, func(st dataStore) (any, error) {
		out, err := cmd.do(ctx, st, *f.project, *id)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}

// removeWebhook removes an endpoint and returns it.
func removeWebhook(ctx context.Context, st dataStore, project, id int64) (any, error) {
	h, err := st.FindWebhook(ctx, project, id)
	if err == nil {
		err = st.DeleteWebhook(ctx, project, id)
	}
	if err != nil {
		return nil, fmt.Errorf("webhooks remove: %w", err)
	}
	return httpapi.WebhookJSON(h, false), nil
}

// testWebhook queues a webhook.test delivery and returns it.
func testWebhook(ctx context.Context, st dataStore, project, id int64) (any, error) {
	d, err := st.TestWebhook(ctx, project, id)
	if err != nil {
		return nil, fmt.Errorf("webhooks test: %w", err)
	}
	return httpapi.DeliveryJSON(d), nil
}

// rotateWebhookSecret gives an endpoint a new secret and returns the
// endpoint with it.
func rotateWebhookSecret(ctx context.Context, st dataStore, project, id int64) (any, error) {
	secret, err := narrator.NewWebhookSecret()
	if err != nil {
		return nil, err
	}
	h, err := st.RotateWebhookSecret(ctx, project, id, secret)
	if err != nil {
		return nil, fmt.Errorf("webhooks rotate-secret: %w", err)
	}
	return httpapi.WebhookJSON(h, true), nil
}

// enableWebhook enables an endpoint again and returns it.
func enableWebhook(ctx context.Context, st dataStore, project, id int64) (any, error) {
	h, err := st.EnableWebhook(ctx, project, id)
	if err != nil {
		return nil, fmt.Errorf("webhooks enable: %w", err)
	}
	return httpapi.WebhookJSON(h, false), nil
}
