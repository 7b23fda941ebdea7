package narrator

import "time"

// Listening events, as the embedded player reports them: each at most once
// per audio and page view. Only daily counts of them are stored; nothing
// about the listener.
const (
	ListenLoad       = "load"        // the player was shown
	ListenPlay       = "play"        // playback started
	ListenProgress25 = "progress_25" // playback reached a quarter of the audio
	ListenProgress50 = "progress_50"
	ListenProgress75 = "progress_75"
	ListenComplete   = "complete" // playback reached the end
)

// ListenEvents returns the listening events in the order of a listen.
func ListenEvents() []string {
	return []string{ListenLoad, ListenPlay, ListenProgress25, ListenProgress50, ListenProgress75, ListenComplete}
}

// ValidateListenEvent returns EINVALID unless event is one of ListenEvents.
func ValidateListenEvent(event string) error {
	for _, e := range ListenEvents() {
		if e == event {
			return nil
		}
	}
	return Errorf(EINVALID, "event must be one of load, play, progress_25, progress_50, progress_75, complete")
}

// ListenCounts are the numbers of each listening event.
type ListenCounts struct {
	Loads, Plays, Progress25, Progress50, Progress75, Completes int64
}

// Add adds n events of kind event; an unknown event is ignored.
func (c *ListenCounts) Add(event string, n int64) {
	switch event {
	case ListenLoad:
		c.Loads += n
	case ListenPlay:
		c.Plays += n
	case ListenProgress25:
		c.Progress25 += n
	case ListenProgress50:
		c.Progress50 += n
	case ListenProgress75:
		c.Progress75 += n
	case ListenComplete:
		c.Completes += n
	}
}

// Reach returns the share of plays, from 0 to 1, that reached 25 %, 50 %,
// 75 % and the end: where listeners stop. With no plays every share is 0.
// A share is capped at 1, since a listener may seek past a quarter without
// a play of their own being counted on the same day.
func (c ListenCounts) Reach() [4]float64 {
	var out [4]float64
	if c.Plays <= 0 {
		return out
	}
	for i, n := range []int64{c.Progress25, c.Progress50, c.Progress75, c.Completes} {
		out[i] = min(float64(n)/float64(c.Plays), 1)
	}
	return out
}

// DailyListens are the listening counts of one UTC day.
type DailyListens struct {
	Day    time.Time // midnight UTC
	Counts ListenCounts
}

// ProjectListens are the listening figures of a project: all-time totals
// and the counts of recent days.
type ProjectListens struct {
	Total ListenCounts
	// Days holds the days since the asked-for day that have any event,
	// oldest first.
	Days []DailyListens
}

// ListenDay returns the UTC day of t, at midnight: the day its listening
// events are counted on.
func ListenDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ListenTally is a number of listening events of one kind for one audio of
// a project on one UTC day: what a batch of counted events writes.
type ListenTally struct {
	ProjectID, AudioID int64
	Event              string
	Day                time.Time // midnight UTC (ListenDay)
	Count              int64
}
