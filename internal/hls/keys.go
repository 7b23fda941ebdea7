package hls

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// SegmentKeys returns the media store keys of the segments that a playlist
// stored at playlistKey names, in order. A playlist's lines that are
// neither blank nor tags or comments (which start with "#") are URIs
// relative to the playlist's folder. A URI that is absolute, or that leads
// out of that folder, is an error: the segments of a playlist live beside
// it. So is a playlist key that is not clean and relative, whose folder
// could lie outside the store.
func SegmentKeys(playlistKey string, playlist []byte) ([]string, error) {
	dir := path.Dir(playlistKey)
	if playlistKey != path.Clean(playlistKey) || path.IsAbs(playlistKey) || dir == ".." || strings.HasPrefix(dir, "../") {
		return nil, fmt.Errorf("playlist key %q is not a clean relative key", playlistKey)
	}
	var keys []string
	sc := bufio.NewScanner(bytes.NewReader(playlist))
	for sc.Scan() {
		uri := strings.TrimSpace(sc.Text())
		if uri == "" || strings.HasPrefix(uri, "#") {
			continue
		}
		key := path.Join(dir, uri)
		inside := strings.HasPrefix(key, dir+"/") || (dir == "." && key != ".." && !strings.HasPrefix(key, "../"))
		if !inside || strings.HasPrefix(uri, "/") || strings.ContainsAny(uri, ":?#") {
			return nil, fmt.Errorf("playlist %s: segment URI %q is not a path inside the playlist's folder", playlistKey, uri)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("playlist %s: %w", playlistKey, err)
	}
	return keys, nil
}
