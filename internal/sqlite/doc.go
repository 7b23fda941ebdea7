// Package sqlite is Narrator's store on SQLite, through the pure-Go driver
// modernc.org/sqlite.
//
// # Connections
//
// Open opens two pools on one file. The writer pool has exactly one
// connection: every transaction of the store goes through it, and so do
// River's (see Store.DB), which is what River's SQLite driver requires. Its
// transactions start with BEGIN IMMEDIATE, so a writer in another process
// (a CLI command beside `narrator serve`) waits up to BusyTimeout instead of
// failing with SQLITE_BUSY. The reader pool has several query_only
// connections for plain reads, which WAL lets run beside the writer.
//
// Every connection gets, through the DSN: busy_timeout (BusyTimeout),
// foreign_keys=ON and synchronous=FULL; the file is in WAL mode. FULL syncs
// the WAL at every commit, so that a commit, once answered, survives a
// power cut or a kernel crash, not only the process being killed.
//
// # Times
//
// Every timestamp is stored as an INTEGER: UTC Unix time in microseconds.
// Integers sort in time order, and reads return UTC times. Store.Now, the
// injected clock, is truncated to microseconds before use, so a time read
// back equals the time written.
//
// # Migrations
//
// Migrations are the embedded files migrations/NNNN_name.sql, applied in
// order by Migrate, each in one transaction with its row in
// schema_migrations. They are forward-only: a shipped file is never edited;
// changes are new files.
//
// # Jobs
//
// Writes that need work done (synthesis, media removal) call the Enqueuer in
// the same transaction, so the job exists exactly when the write is
// committed. This package does not import River; the jobs package
// implements Enqueuer.
package sqlite
