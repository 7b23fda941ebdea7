// Package postgres is Narrator's store on PostgreSQL, through pgx. It has
// the same methods, contracts and error codes as the SQLite store, and runs
// the same conformance suite (internal/storetest); the rules it follows are
// the root package's. Many identical nodes may share one database.
//
// # Connections
//
// Open makes one pgxpool.Pool from a URL such as
// postgres://user:pass@host:5432/narrator?sslmode=require; the pool's size
// and timeouts are set in the URL (pool_max_conns and the like, see
// pgxpool.ParseConfig). Statements are prepared and cached on each
// connection, so a pooler in front of the database must keep a connection
// per session (PgBouncer's session mode). Store.Pool is the same pool, for
// River's migrations and queue.
//
// Writes run in READ COMMITTED transactions. A write that depends on what it
// reads (update, delete, finish, fail, lease, resynthesis)
// first locks the audio's row with SELECT ... FOR UPDATE, so that a node
// doing the same at once waits and then works on the result. Two nodes
// creating an audio with one external ID at once meet on the partial unique
// index audios_external_id: the second transaction runs once more, finds
// the first one's audio and updates it; a clash when changing an external
// ID becomes EINVALID, as it would without the race. Reads of several
// statements run in read-only REPEATABLE READ transactions, which see one
// snapshot and never fail to serialize.
//
// # Times
//
// Every timestamp is a timestamptz column. Store.Now, the injected clock, is
// truncated to microseconds (the column's precision) and kept in UTC before
// use, and reads return UTC, so a time read back equals the time written.
//
// # Migrations
//
// Migrations are the embedded files migrations/NNNN_name.sql, applied in
// order by Migrate, each in one transaction with its row in
// schema_migrations. Each transaction first takes a transaction-scoped
// advisory lock (pg_advisory_xact_lock), so nodes that start together and
// all migrate apply each file once. They are forward-only: a shipped file is
// never edited; changes are new files. River's own tables are migrated by
// the jobs package, on Store.Pool.
//
// # Jobs
//
// Writes that need work done (synthesis, media removal) call the
// JobInserter in the same transaction, so the job exists exactly when the
// write is committed. This package does not import River; the jobs package
// implements JobInserter with River's InsertTx on pgx.
//
// # Bulk loads
//
// A benchmark or an import may fill the tables with plain SQL, bypassing
// the store, provided it keeps what the store keeps:
//
//   - audios: project_id, title, body, author, article_url, state
//     ('unprocessed', 'processed' or 'failed'), created_at and updated_at;
//     external_id NULL or unique among the project's live audios; metadata a
//     JSON object of strings (default '{}'); revision, error and duration_ms
//     have defaults; deleted_at NULL for a live audio; seq the audio's
//     number in its project, 1 for the oldest and one more for each audio
//     added after it, above every number the project holds (list pages are
//     ranges of these numbers, narrator.PageSeqs). Leave id to its identity
//     column.
//   - media: one row per audio and content type, 'mp3' and 'm3u8'
//     (narrator.MediaTypes), with key NULL until the audio is processed and
//     set for a processed one.
//   - projects.audio_count: raised by the number of live audios loaded into
//     the project, in the same transaction, since no read counts them.
//
// Run ANALYZE afterwards so that the planner knows the tables' sizes.
package postgres
