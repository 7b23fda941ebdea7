-- 0003_webhooks: projects' webhook endpoints and their deliveries.
--
-- secret is kept as it is, since every delivery is signed with it;
-- disabled_at and failing_since are NULL when not set.
CREATE TABLE webhooks (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	project_id    bigint      NOT NULL REFERENCES projects (id),
	url           text        NOT NULL,
	events        text[]      NOT NULL,
	secret        text        NOT NULL,
	disabled_at   timestamptz,
	failing_since timestamptz,
	created_at    timestamptz NOT NULL
);

CREATE INDEX webhooks_project ON webhooks (project_id, id);

-- One row per event and endpoint. message_id is the webhook-id header,
-- the same for every attempt and resend. audio_id is NULL for a test.
CREATE TABLE webhook_deliveries (
	id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	webhook_id      bigint      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	message_id      text        NOT NULL UNIQUE,
	event           text        NOT NULL,
	audio_id        bigint,
	body            bytea       NOT NULL,
	state           text        NOT NULL,
	attempts        integer     NOT NULL DEFAULT 0,
	response_code   integer     NOT NULL DEFAULT 0,
	last_error      text        NOT NULL DEFAULT '',
	created_at      timestamptz NOT NULL,
	last_attempt_at timestamptz
);

CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id DESC);
