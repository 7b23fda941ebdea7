-- 0002_dashboard: dashboard users and their sessions.

CREATE TABLE users (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	account_id    INTEGER NOT NULL REFERENCES accounts (id),
	email         TEXT    NOT NULL UNIQUE, -- normalised: trimmed, lower-case
	password_hash BLOB    NOT NULL,        -- bcrypt
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);

CREATE INDEX users_account ON users (account_id, id);

-- A session's token is only in the browser's cookie; the row keeps its
-- SHA-256 hash, so a leaked database signs nobody in.
CREATE TABLE sessions (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	hash       BLOB    NOT NULL UNIQUE,
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	csrf_token TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);

CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);
