package localfs

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/narrator/narrator"
)

// TestWrapMarksDiskErrors checks which errors of the file system a store
// call returns as narrator.EUNAVAILABLE: those of a disk that fails or is
// full, not a missing file, a denied one, or an error that has a code.
func TestWrapMarksDiskErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: "/media/a", Err: syscall.EIO}, narrator.EUNAVAILABLE},
		{&fs.PathError{Op: "write", Path: "/media/a", Err: syscall.ENOSPC}, narrator.EUNAVAILABLE},
		{&fs.PathError{Op: "write", Path: "/media/a", Err: syscall.EDQUOT}, narrator.EUNAVAILABLE},
		{&fs.PathError{Op: "open", Path: "/media/a", Err: syscall.EROFS}, narrator.EUNAVAILABLE},
		{&fs.PathError{Op: "open", Path: "/media/a", Err: syscall.ENOENT}, narrator.EINTERNAL},
		{&fs.PathError{Op: "open", Path: "/media/a", Err: syscall.EACCES}, narrator.EINTERNAL},
		{narrator.Errorf(narrator.EINVALID, "bad key"), narrator.EINVALID},
		{errors.New("something else"), narrator.EINTERNAL},
	} {
		err := tt.err
		wrap(&err, "localfs: put %q", "a")
		if got := narrator.ErrorCode(err); got != tt.want {
			t.Errorf("%v: code %q, want %q", tt.err, got, tt.want)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%v: the wrapped error lost it: %v", tt.err, err)
		}
	}
	var err error
	wrap(&err, "localfs: put %q", "a")
	if err != nil {
		t.Errorf("wrap of no error: %v", err)
	}
}
