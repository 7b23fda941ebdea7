-- 0003_pronunciations: per-project pronunciation rules.

CREATE TABLE pronunciations (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	project_id INTEGER NOT NULL REFERENCES projects (id),
	phrase     TEXT    NOT NULL,
	say        TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);

-- One rule per phrase and project, whatever its letter case.
CREATE UNIQUE INDEX pronunciations_phrase ON pronunciations (project_id, lower(phrase));
