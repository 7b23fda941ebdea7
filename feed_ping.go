package narrator

import (
	"maps"
	"slices"
	"time"
)

// FeedPingJob asks for the WebSub hub of the podcast feed of a project to
// be told that the feed changed (a WebSub publish ping), at At. Pings of
// one feed due at one At are one job: a burst of changes makes one ping
// (FeedPingAt).
type FeedPingJob struct {
	ProjectID int64
	At        time.Time
}

// JobKind implements Job.
func (FeedPingJob) JobKind() string { return "websub_publish" }

// FeedPingWindow is how long the changes of one feed are gathered into one
// ping: a hub reads the feed once for a burst of changes.
const FeedPingWindow = 10 * time.Second

// FeedPing returns the ping that a change of the podcast feed of a project
// at now needs: at the end of now's FeedPingWindow, so that every change in
// one window asks for the same ping, and the feed the hub then reads holds
// them all. A change after that end falls in the next window, and its own
// ping.
func FeedPing(projectID int64, now time.Time) FeedPingJob {
	return FeedPingJob{ProjectID: projectID, At: now.UTC().Truncate(FeedPingWindow).Add(FeedPingWindow)}
}

// FeedShows reports whether a podcast feed may list a: a live, processed
// audio. Whether it is published yet is the feed's to decide as it reads.
func FeedShows(a *Audio) bool { return a != nil && !a.Deleted && a.State == StateProcessed }

// FeedChanged reports whether a change of an audio from before to after
// (nil before a create) changes what its project's podcast feed shows: the
// audio enters or leaves the feed, or an audio in it changes what its item
// says (title, body, author, article URL, metadata, duration, media).
func FeedChanged(before, after *Audio) bool {
	if FeedShows(before) != FeedShows(after) {
		return true
	}
	if !FeedShows(after) {
		return false
	}
	return before.Title != after.Title || before.Body != after.Body || before.Author != after.Author ||
		before.ArticleURL != after.ArticleURL || !maps.Equal(before.Metadata, after.Metadata) ||
		before.DurationMS != after.DurationMS || !slices.Equal(before.MediaKeys(), after.MediaKeys())
}

// AccessChangesFeed reports whether a change of a project's access settings
// from before to after changes what its podcast feed shows: its mode, since
// a signed project's items go without their text (FeedBodyCharsOf).
func AccessChangesFeed(before, after ProjectAccess) bool { return before.Mode != after.Mode }

// PublicationPings returns the pings that storing the publication p at now
// needs for the feed of project projectID: one now, and, for an audio
// scheduled for later, one when it becomes published, which no write
// marks.
func PublicationPings(projectID int64, p Publication, now time.Time) []FeedPingJob {
	pings := []FeedPingJob{FeedPing(projectID, now)}
	if p.State == PublicationScheduled && p.PublishAt.After(now) {
		pings = append(pings, FeedPing(projectID, p.PublishAt))
	}
	return pings
}
