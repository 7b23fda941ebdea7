package sqlstore

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// fakeTx records how a transaction ends; its other methods are not used.
type fakeTx struct {
	Tx
	events    *[]string
	commitErr error
}

func (f fakeTx) Commit(context.Context) error {
	*f.events = append(*f.events, "commit")
	return f.commitErr
}

func (f fakeTx) Rollback(context.Context) { *f.events = append(*f.events, "rollback") }

// TestInTx checks that inTx commits only a write whose fn succeeds, always
// rolls back (a rollback after a commit does nothing), passes fn's error
// through as it is, and wraps the errors of begin and commit with the
// operation's name.
func TestInTx(t *testing.T) {
	t.Parallel()
	refused := narrator.Errorf(narrator.ENOTFOUND, "audio 7 not found")
	beginErr := errors.New("database closed")
	commitErr := errors.New("disk full")
	tests := []struct {
		name      string
		commit    bool
		beginErr  error
		commitErr error
		fnErr     error
		want      int
		wantErr   string
		wantCode  string
		events    []string
	}{
		{name: "write", commit: true, want: 1, events: []string{"fn", "commit", "rollback"}},
		{name: "read", commit: false, want: 1, events: []string{"fn", "rollback"}},
		{name: "write refused", commit: true, fnErr: refused, want: 1, wantErr: refused.Error(), wantCode: narrator.ENOTFOUND, events: []string{"fn", "rollback"}},
		{name: "read refused", commit: false, fnErr: refused, want: 1, wantErr: refused.Error(), wantCode: narrator.ENOTFOUND, events: []string{"fn", "rollback"}},
		{name: "begin fails", commit: true, beginErr: beginErr, wantErr: "do it: database closed", wantCode: narrator.EINTERNAL},
		{name: "commit fails", commit: true, commitErr: commitErr, wantErr: "do it: commit: disk full", wantCode: narrator.EINTERNAL, events: []string{"fn", "commit", "rollback"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var events []string
			begin := func(context.Context) (Tx, error) {
				return fakeTx{events: &events, commitErr: tt.commitErr}, tt.beginErr
			}
			got, err := inTx(t.Context(), "do it", begin, tt.commit, func(Tx) (int, error) {
				events = append(events, "fn")
				return 1, tt.fnErr
			})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("inTx: %v", err)
				}
			} else if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("inTx: error %v, want %q", err, tt.wantErr)
			}
			if tt.fnErr != nil && err != tt.fnErr {
				t.Errorf("inTx: error %#v, want fn's own %#v", err, tt.fnErr)
			}
			if tt.wantErr != "" && narrator.ErrorCode(err) != tt.wantCode {
				t.Errorf("inTx: code %q, want %q", narrator.ErrorCode(err), tt.wantCode)
			}
			for _, cause := range []error{tt.beginErr, tt.commitErr} {
				if cause != nil && !errors.Is(err, cause) {
					t.Errorf("inTx: error %v does not wrap %v", err, cause)
				}
			}
			if got != tt.want {
				t.Errorf("inTx = %d, want %d", got, tt.want)
			}
			if diff := cmp.Diff(tt.events, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInTxPanic checks that a panic of fn rolls the transaction back and
// goes on up.
func TestInTxPanic(t *testing.T) {
	t.Parallel()
	var events []string
	begin := func(context.Context) (Tx, error) { return fakeTx{events: &events}, nil }
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on up")
			}
		}()
		_, _ = inTx(t.Context(), "do it", begin, true, func(Tx) (int, error) { panic("boom") })
	}()
	if diff := cmp.Diff([]string{"rollback"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
