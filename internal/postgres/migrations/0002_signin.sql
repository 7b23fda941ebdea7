-- 0002_signin: failed dashboard sign-ins, counted by every node.
--
-- key is a limit's key ("ip\0…" or "email\0…"). Rows older than a day are
-- deleted as new ones arrive.
CREATE TABLE signin_failures (
	key text        NOT NULL,
	at  timestamptz NOT NULL
);

CREATE INDEX signin_failures_key ON signin_failures (key, at DESC);
CREATE INDEX signin_failures_at ON signin_failures (at);
