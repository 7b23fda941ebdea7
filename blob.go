package narrator

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// ErrBlobNotFound is returned, possibly wrapped, by media stores when no
// object exists at a key. Match it with errors.Is. It lives here, not in a
// store package, so that every store and every consumer share one sentinel.
var ErrBlobNotFound = errors.New("blob not found")

// BlobInfo describes a stored media object.
type BlobInfo struct {
	Size    int64     // length in bytes
	ModTime time.Time // when the object was last written
}

// MaxBlobKey is the longest blob key allowed, in bytes (S3's own limit).
const MaxBlobKey = 1024

// ValidateBlobKey reports whether key is a valid media object key: a relative,
// slash-separated path such as "3f9c…/audio.mp3". Segments must be non-empty,
// must not start with "." (which excludes "." and ".." and leaves names such
// as stores' temporary files unreachable), and the key must not contain a
// backslash or an ASCII control character such as NUL. It returns an EINVALID
// *Error otherwise. Every store checks keys with it, so a key can never
// address anything outside the store.
func ValidateBlobKey(key string) error {
	if key == "" || len(key) > MaxBlobKey {
		return Errorf(EINVALID, "blob key must be 1 to %d bytes", MaxBlobKey)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return Errorf(EINVALID, "blob key %q contains a backslash or control character", key)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg[0] == '.' {
			return Errorf(EINVALID, "blob key %q has an empty segment or one starting with a dot", key)
		}
	}
	return nil
}

// MediaContentType returns the Content-Type of the media object at key,
// chosen by the key's extension, case-insensitively. Anything unknown is
// application/octet-stream, so that nothing is ever sniffed as HTML. Stores
// record it with the object and the media server sends it, from this one rule.
// A rendering's chapters (ChaptersName) are application/json+chapters, as
// the Podcasting 2.0 JSON chapters format asks.
func MediaContentType(key string) string {
	if path.Base(key) == ChaptersName {
		return "application/json+chapters"
	}
	switch strings.ToLower(path.Ext(key)) {
	case ".mp3":
		return "audio/mpeg"
	case ".m3u8":
		return "application/vnd.apple.mpegurl"
	case ".ts":
		return "video/mp2t"
	case ".aac":
		return "audio/aac"
	case ".m4a":
		return "audio/mp4"
	case ".vtt":
		return "text/vtt; charset=utf-8"
	case ".json":
		return "application/json"
	default:
		return "application/octet-stream"
	}
}

// BlobObject is a stored media object as a listing gives it.
type BlobObject struct {
	Key string
	BlobInfo
}

// mediaFolderBytes is the randomness in the name of a rendering's folder:
// 128 bits, written as 32 lowercase hex digits.
const mediaFolderBytes = 16

// NewMediaFolder returns the name of a new rendering's folder: random, so
// that its URLs cannot be guessed and no two renderings share one.
func NewMediaFolder() (string, error) {
	b := make([]byte, mediaFolderBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random media folder: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// IsMediaFolder reports whether name has the form NewMediaFolder gives.
// Only such folders are renderings' (voices and previews are kept under
// other names), and only they are ever swept as orphans (OrphanMediaAge).
func IsMediaFolder(name string) bool {
	if len(name) != 2*mediaFolderBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// OrphanMediaAge is how long after its last file was written a rendering's
// folder that no audio owns (none of its media and none of its progress
// name it) is deleted, while renderings may be under way
// (MediaOrphanCutoff). An attempt writes its files and finishes them
// within its time limit (twenty minutes), so a folder that has gone this
// long unowned and untouched was left by a process that died, or by an
// attempt whose files were never published.
const OrphanMediaAge = time.Hour

// MediaSweepInterval is how often a server looks for orphaned folders of
// media.
const MediaSweepInterval = time.Hour

// MediaOrphanCutoff returns the instant before which the files of a
// rendering's folder that no audio owns must all have been written for
// the folder to be deleted at now: OrphanMediaAge before now, or, when
// no rendering can be under way (idle: a server on SQLite, which one
// server owns alone, before its jobs start), the zero time, meaning any
// time at all: what the last process left unowned is an orphan at once.
func MediaOrphanCutoff(now time.Time, idle bool) time.Time {
	if idle {
		return time.Time{}
	}
	return now.Add(-OrphanMediaAge)
}
