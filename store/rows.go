package store

import (
	"context"
	"database/sql"
)

// lister is what queryAll reads from: the database or a transaction.
type lister interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryAll runs query and scans every row with scan.
func queryAll[T any](ctx context.Context, q lister, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// withMore is a row whose columns after those of an item's scan go to
// more (the session columns of an inbox's view of the item).
type withMore struct {
	sc   scanner
	more []any
}

func (w withMore) Scan(dest ...any) error { return w.sc.Scan(append(dest, w.more...)...) }
