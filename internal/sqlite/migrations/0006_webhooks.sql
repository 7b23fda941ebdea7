-- 0006_webhooks: projects' webhook endpoints and their deliveries.
--
-- events is a comma-separated list of subscribed events. secret is kept as
-- it is, since every delivery is signed with it. Times are UTC Unix
-- microseconds; disabled_at and failing_since are NULL when not set.
CREATE TABLE webhooks (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	project_id    INTEGER NOT NULL REFERENCES projects (id),
	url           TEXT    NOT NULL,
	events        TEXT    NOT NULL,
	secret        TEXT    NOT NULL,
	disabled_at   INTEGER,
	failing_since INTEGER,
	created_at    INTEGER NOT NULL
);

CREATE INDEX webhooks_project ON webhooks (project_id, id);

-- One row per event and endpoint. message_id is the webhook-id header,
-- the same for every attempt and resend. audio_id is NULL for a test.
CREATE TABLE webhook_deliveries (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	message_id      TEXT    NOT NULL UNIQUE,
	event           TEXT    NOT NULL,
	audio_id        INTEGER,
	body            BLOB    NOT NULL,
	state           TEXT    NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	response_code   INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT    NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	last_attempt_at INTEGER
);

CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id DESC);
