-- 0008_signin_attempts: sign-in attempts are recorded before the password
-- is checked, atomically with the limit check, and a successful one is
-- then deleted by its attempt token; a row left is a failure (or an
-- attempt under way). Rows of before hold '' and are only ever pruned.
ALTER TABLE signin_failures ADD COLUMN attempt text NOT NULL DEFAULT '';

CREATE INDEX signin_failures_attempt ON signin_failures (attempt);
