package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/storetest"
)

// logicalType maps the type SQLite declares for a column to the logical
// one. SQLite stores instants as INTEGER Unix microseconds, days as
// INTEGER, booleans as INTEGER 0 or 1, and JSON and lists as TEXT: their
// names tell them apart.
func logicalType(column, declared string) string {
	switch declared {
	case "TEXT":
		switch column {
		case "metadata":
			return "json"
		case "events":
			return "list"
		}
		return "text"
	case "BLOB":
		return "bytes"
	case "REAL":
		return "float"
	case "INTEGER":
		switch {
		case strings.HasSuffix(column, "_at"), column == "at", column == "failing_since", column == "lease_until":
			return "time"
		case column == "day":
			return "date"
		case column == "enabled", column == "explicit", column == "download_button":
			return "bool"
		}
		return "int"
	}
	return "?" + declared
}

// TestSchema checks that the migrated schema is the logical schema both
// stores share (storetest.CheckSchema).
func TestSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := mustOpen(t, Options{}).DB()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'river%' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var schema storetest.Schema
	for _, name := range names {
		tbl := storetest.Table{Name: name}
		rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, name)
		if err != nil {
			t.Fatal(err)
		}
		primary := map[int]string{}
		for rows.Next() {
			var col, typ string
			var notNull, pk int
			if err := rows.Scan(&col, &typ, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			tbl.Columns = append(tbl.Columns, storetest.Column{Name: col, Type: logicalType(col, typ), Nullable: notNull == 0 && pk == 0})
			if pk > 0 {
				primary[pk] = col
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(primary) > 0 {
			pk := storetest.Index{Primary: true, Unique: true}
			for i := 1; i <= len(primary); i++ {
				pk.Columns = append(pk.Columns, primary[i])
			}
			tbl.Indexes = append(tbl.Indexes, pk)
		}
		rows, err = db.QueryContext(ctx, `SELECT name, "unique", origin, partial FROM pragma_index_list(?) WHERE origin <> 'pk'`, name)
		if err != nil {
			t.Fatal(err)
		}
		// Read the list first: the writer pool has one connection, which
		// the list's rows hold until they are closed.
		var indexes []storetest.Index
		for rows.Next() {
			var idx storetest.Index
			var origin string
			if err := rows.Scan(&idx.Name, &idx.Unique, &origin, &idx.Partial); err != nil {
				t.Fatal(err)
			}
			indexes = append(indexes, idx)
			if origin == "u" {
				// A unique constraint's index: its name is made up.
				indexes[len(indexes)-1].Name = ""
				indexes[len(indexes)-1].Columns = []string{idx.Name}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for i := range indexes {
			name := indexes[i].Name
			if name == "" {
				name, indexes[i].Columns = indexes[i].Columns[0], nil
			}
			if err := indexColumns(t, db, &indexes[i], name); err != nil {
				t.Fatal(err)
			}
		}
		tbl.Indexes = append(tbl.Indexes, indexes...)
		schema = append(schema, tbl)
	}
	storetest.CheckSchema(t, "sqlite", schema)
}

// indexColumns sets the columns of idx from the index named name: an
// expression's as "expr".
func indexColumns(t *testing.T, db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, idx *storetest.Index, name string) error {
	rows, err := db.QueryContext(t.Context(), `SELECT cid, name FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var cid int
		var col sql.NullString
		if err := rows.Scan(&cid, &col); err != nil {
			return err
		}
		if cid == -2 {
			idx.Columns = append(idx.Columns, "expr")
			continue
		}
		idx.Columns = append(idx.Columns, col.String)
	}
	return rows.Err()
}
