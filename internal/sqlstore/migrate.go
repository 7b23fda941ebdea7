package sqlstore

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/narrator/narrator/internal/migration"
)

// Migrations are a store's embedded schema migrations and the statements
// of its dialect that Migrate and SchemaCurrent run besides them.
type Migrations struct {
	// FS holds the migrations, as migrations/NNNN_name.sql.
	FS fs.FS
	// Lock runs first in each migration's transaction and takes a lock
	// that serialises the processes migrating one database; "" for none.
	Lock string
	// CreateTable creates schema_migrations if it does not exist.
	CreateTable string
	// TableExists is a query of one integer: 1 if schema_migrations
	// exists, 0 if not.
	TableExists string
}

const migrationAppliedSQL = `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`

const recordMigrationSQL = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`

// Migrate applies the pending embedded migrations in order, each in its own
// transaction together with its row in schema_migrations. Running it again,
// or from several processes or nodes at once, is safe: each transaction
// first takes the dialect's lock, so one applies a migration and the others
// then find it applied.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migration.Load(s.migrations.FS, "migrations")
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := s.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, m migration.Migration) error {
	return s.write(ctx, fmt.Sprintf("migrate %s", m.Name), func(tx Tx) error {
		if s.migrations.Lock != "" {
			if _, err := tx.Exec(ctx, s.migrations.Lock); err != nil {
				return fmt.Errorf("migrate %s: lock: %w", m.Name, err)
			}
		}
		// Under the lock, so that two processes never create the table at once
		// (IF NOT EXISTS alone does not prevent that race on PostgreSQL).
		if _, err := tx.Exec(ctx, s.migrations.CreateTable); err != nil {
			return fmt.Errorf("migrate %s: create schema_migrations: %w", m.Name, err)
		}
		var applied int
		if err := tx.QueryRow(ctx, migrationAppliedSQL, m.Version).Scan(&applied); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if applied > 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, recordMigrationSQL, m.Version, m.Name, s.now()); err != nil {
			return fmt.Errorf("migrate %s: record: %w", m.Name, err)
		}
		return nil
	})
}

const appliedVersionsSQL = `SELECT version FROM schema_migrations ORDER BY version`

// SchemaCurrent reports whether every embedded migration has been applied.
// It returns an error if the database has migrations this binary does not
// know, that is if a newer binary migrated it.
func (s *Store) SchemaCurrent(ctx context.Context) (bool, error) {
	ms, err := migration.Load(s.migrations.FS, "migrations")
	if err != nil {
		return false, err
	}
	return ReadV(ctx, s, "schema current", func(tx Tx) (bool, error) {
		var exists int
		if err := tx.QueryRow(ctx, s.migrations.TableExists).Scan(&exists); err != nil {
			return false, fmt.Errorf("schema current: %w", err)
		}
		if exists == 0 {
			return false, nil
		}
		rows, err := tx.Query(ctx, appliedVersionsSQL)
		if err != nil {
			return false, fmt.Errorf("schema current: %w", err)
		}
		versions, err := collect(rows, func(r Row) (int, error) {
			var v int
			err := r.Scan(&v)
			return v, err
		})
		if err != nil {
			return false, fmt.Errorf("schema current: %w", err)
		}
		return migration.Current(ms, versions)
	})
}
