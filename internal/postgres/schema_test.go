package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator/internal/postgres"
	"github.com/narrator/narrator/internal/postgres/pgtest"
	"github.com/narrator/narrator/internal/storetest"
)

const schemaColumnsSQL = `
SELECT table_name, column_name, data_type, is_nullable = 'YES'
FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name NOT LIKE 'river%'
	AND table_name NOT IN ('schema_migrations', 'test_jobs')
ORDER BY table_name, column_name`

// schemaIndexesSQL lists each index with its columns (an expression's
// position holds 0), whether it is unique, primary, a unique constraint's
// or partial.
const schemaIndexesSQL = `
SELECT t.relname, i.relname, x.indkey::int[], x.indisunique, x.indisprimary,
	EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype = 'u'),
	x.indpred IS NOT NULL,
	ARRAY(SELECT a.attname FROM unnest(x.indkey::int[]) WITH ORDINALITY k(attnum, n)
		LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[]
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND t.relname NOT LIKE 'river%'
	AND t.relname NOT IN ('schema_migrations', 'test_jobs')`

// logicalTypes maps PostgreSQL's types to the logical ones.
var logicalTypes = map[string]string{
	"bigint": "int", "integer": "int", "smallint": "int", "text": "text", "bytea": "bytes", "boolean": "bool",
	"timestamp with time zone": "time", "date": "date", "jsonb": "json", "ARRAY": "list",
	"double precision": "float",
}

// TestSchema checks that the migrated schema is the logical schema both
// stores share (storetest.CheckSchema).
func TestSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := mustOpen(t, pgtest.NewDatabase(t, migrated), postgres.Options{})
	tables := map[string]*storetest.Table{}
	table := func(name string) *storetest.Table {
		if tables[name] == nil {
			tables[name] = &storetest.Table{Name: name}
		}
		return tables[name]
	}
	rows, err := s.Pool().Query(ctx, schemaColumnsSQL)
	if err != nil {
		t.Fatal(err)
	}
	var tbl, col, typ string
	var null bool
	if _, err := pgx.ForEachRow(rows, []any{&tbl, &col, &typ, &null}, func() error {
		logical, ok := logicalTypes[typ]
		if !ok {
			logical = "?" + typ
		}
		table(tbl).Columns = append(table(tbl).Columns, storetest.Column{Name: col, Type: logical, Nullable: null})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rows, err = s.Pool().Query(ctx, schemaIndexesSQL)
	if err != nil {
		t.Fatal(err)
	}
	var (
		name                                 string
		keys                                 []int
		cols                                 []*string
		unique, primary, constraint, partial bool
	)
	if _, err := pgx.ForEachRow(rows, []any{&tbl, &name, &keys, &unique, &primary, &constraint, &partial, &cols}, func() error {
		idx := storetest.Index{Name: name, Unique: unique, Primary: primary, Partial: partial}
		if primary || constraint {
			idx.Name = ""
		}
		for i, k := range keys {
			if k == 0 || cols[i] == nil {
				idx.Columns = append(idx.Columns, "expr")
				continue
			}
			idx.Columns = append(idx.Columns, strings.Clone(*cols[i]))
		}
		table(tbl).Indexes = append(table(tbl).Indexes, idx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var schema storetest.Schema
	for _, t := range tables {
		schema = append(schema, *t)
	}
	storetest.CheckSchema(t, "postgres", schema)
}
