package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/config"
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

func runWebhooks(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, webhooksUsage)
		return usagef("webhooks: missing subcommand")
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet(e, "webhooks "+sub, "webhooks "+sub+" [--data DIR|--database URL] --project ID ...")
	data := config.BackendFlags(fs, e.getenv)
	project := fs.Int64("project", 0, "project `id` (required)")
	var url, events *string
	var id *int64
	switch sub {
	case "add":
		url = fs.String("url", "", "the endpoint's http or https `URL` (required)")
		events = fs.String("events", "", "comma-separated `events` to send (default all)")
	case "remove", "test", "rotate-secret", "enable":
		id = fs.Int64("id", 0, "webhook `id` (required)")
	case "list":
	default:
		fmt.Fprintln(e.stderr, webhooksUsage)
		return usagef("webhooks: unknown subcommand %q", sub)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *project <= 0 {
		fs.Usage()
		return usagef("webhooks %s: --project is required", sub)
	}
	if id != nil && *id <= 0 {
		fs.Usage()
		return usagef("webhooks %s: --id is required", sub)
	}
	var h *narrator.Webhook
	if sub == "add" {
		var list []string
		for _, ev := range strings.Split(*events, ",") {
			if ev = strings.TrimSpace(ev); ev != "" {
				list = append(list, ev)
			}
		}
		var err error
		if h, err = narrator.NewWebhook(*project, *url, list, time.Now()); err != nil {
			return usagef("webhooks add: %s", narrator.ErrorMessage(err))
		}
	}
	st, err := openStore(ctx, e, data)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "add":
		if err := st.CreateWebhook(ctx, h); err != nil {
			return fmt.Errorf("webhooks add: %w", err)
		}
		return printJSON(e.stdout, httpapi.WebhookJSON(h, true))
	case "list":
		hooks, err := st.ListWebhooks(ctx, *project)
		if err != nil {
			return fmt.Errorf("webhooks list: %w", err)
		}
		out := make([]any, 0, len(hooks))
		for _, h := range hooks {
			out = append(out, httpapi.WebhookJSON(h, false))
		}
		return printJSON(e.stdout, out)
	case "remove":
		h, err := st.FindWebhook(ctx, *project, *id)
		if err == nil {
			err = st.DeleteWebhook(ctx, *project, *id)
		}
		if err != nil {
			return fmt.Errorf("webhooks remove: %w", err)
		}
		return printJSON(e.stdout, httpapi.WebhookJSON(h, false))
	case "test":
		d, err := st.TestWebhook(ctx, *project, *id)
		if err != nil {
			return fmt.Errorf("webhooks test: %w", err)
		}
		return printJSON(e.stdout, httpapi.DeliveryJSON(d))
	case "rotate-secret":
		secret, err := narrator.NewWebhookSecret()
		if err != nil {
			return err
		}
		h, err := st.RotateWebhookSecret(ctx, *project, *id, secret)
		if err != nil {
			return fmt.Errorf("webhooks rotate-secret: %w", err)
		}
		return printJSON(e.stdout, httpapi.WebhookJSON(h, true))
	default: // enable
		h, err := st.EnableWebhook(ctx, *project, *id)
		if err != nil {
			return fmt.Errorf("webhooks enable: %w", err)
		}
		return printJSON(e.stdout, httpapi.WebhookJSON(h, false))
	}
}
