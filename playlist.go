package narrator

import (
	"strings"
	"time"
)

// Playlists of the embedded player: a project's latest published audios,
// or those of one category.
const (
	// PlaylistLength is how many audios a playlist holds at most.
	PlaylistLength = 20
	// CategoryKey is the metadata key that names an audio's categories,
	// separated by commas.
	CategoryKey = "category"
)

// InCategory reports whether the audio's metadata names the category c
// (compared without case and surrounding spaces) among its CategoryKey's
// comma-separated values. Every audio is in the category "".
func (a *Audio) InCategory(c string) bool {
	c = strings.TrimSpace(c)
	if c == "" {
		return true
	}
	for _, v := range strings.Split(a.Metadata[CategoryKey], ",") {
		if strings.EqualFold(strings.TrimSpace(v), c) {
			return true
		}
	}
	return false
}

// Playable reports whether a playlist may hold the audio at now: listed
// (Listed) and processed, so that it has its MP3.
func Playable(a *Audio, p Publication, now time.Time) bool {
	return Listed(a, p, now) && a.State == StateProcessed
}
