package narrator

import (
	"strings"
	"testing"
	"time"
)

func TestLengthCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    time.Duration
		max  time.Duration
		want string // part of the message; "" for no error
	}{
		{"under the default", 2*time.Hour + 59*time.Minute, 0, ""},
		{"at the default", MaxAudioDuration, 0, ""},
		{"over the default", 13*time.Hour + 36*time.Minute + 40*time.Second, 0, "body would make 13 h 36 min of audio or more; at most 3 h is allowed"},
		{"own cap", 90 * time.Second, time.Minute, "body would make 1 min of audio or more; at most 1 min is allowed"},
		{"whole hours", 4 * time.Hour, 2*time.Hour + 30*time.Minute, "4 h of audio or more; at most 2 h 30 min"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The text's estimate is what it was given: Text and Speech
			// judge a length alike.
			c := LengthCheck{Max: tt.max, Estimate: func(title, author, body string) time.Duration {
				if title != "T" || author != "A" || body != "B" {
					t.Errorf("Estimate(%q, %q, %q), want the text given to Text", title, author, body)
				}
				return tt.d
			}}
			for name, err := range map[string]error{"Text": c.Text("T", "A", "B"), "Speech": c.Speech(tt.d)} {
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s of %v, max %v = %v, want nil", name, tt.d, tt.max, err)
				case tt.want != "" && (ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tt.want)):
					t.Errorf("%s of %v, max %v = %v, want EINVALID with %q", name, tt.d, tt.max, err, tt.want)
				}
			}
		})
	}
}

func TestCheckSynthesis(t *testing.T) {
	t.Parallel()
	limits := Limits{MaxQueued: 3, MaxMediaBytes: 1000}
	tests := []struct {
		name   string
		limits Limits
		usage  Usage
		adds   bool
		want   string
	}{
		{"room", limits, Usage{Queued: 2, MediaBytes: 999}, true, ""},
		{"queue full", limits, Usage{Queued: 3}, true, EQUEUEFULL},
		{"queue full but the audio waits already", limits, Usage{Queued: 3}, false, ""},
		{"storage full", limits, Usage{MediaBytes: 1000}, false, EQUOTA},
		{"both full: storage first", limits, Usage{Queued: 5, MediaBytes: 5000}, true, EQUOTA},
		{"no limits", Limits{}, Usage{Queued: 1 << 30, MediaBytes: 1 << 50}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ErrorCode(tt.limits.CheckSynthesis(tt.usage, tt.adds)); got != tt.want {
				t.Errorf("CheckSynthesis(%+v, %t) code %q, want %q", tt.usage, tt.adds, got, tt.want)
			}
		})
	}
}

func TestCheckSources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limits Limits
		n      int
		want   string
	}{
		{"room", Limits{MaxSources: 3}, 2, ""},
		{"full", Limits{MaxSources: 3}, 3, ECONFLICT},
		{"over, the limit lowered since", Limits{MaxSources: 3}, 7, ECONFLICT},
		{"no limit", Limits{}, 1 << 20, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.limits.CheckSources(tt.n)
			if got := ErrorCode(err); got != tt.want {
				t.Errorf("CheckSources(%d) code %q, want %q", tt.n, got, tt.want)
			}
			if err != nil && !strings.Contains(ErrorMessage(err), "at most") && !strings.Contains(ErrorMessage(err), "the most it may have") {
				t.Errorf("CheckSources(%d) message %q does not name the limit", tt.n, ErrorMessage(err))
			}
		})
	}
}

func TestFairRound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head int64
		u    Usage
		want int64
	}{
		{"empty queue, new account", 0, Usage{}, 0},
		{"new account joins the head", 40, Usage{}, 40},
		{"after the account's own waiting jobs", 40, Usage{Queued: 3, NextRound: 43}, 43},
		{"the head has passed the account", 40, Usage{Queued: 2, NextRound: 12}, 40},
		{"a stale round counts only as far as the account has queued", 40, Usage{Queued: 2, NextRound: 900}, 42},
		{"a stale round of an account with nothing queued", 40, Usage{NextRound: 900}, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := FairRound(tt.head, tt.u); got != tt.want {
				t.Errorf("FairRound(%d, %+v) = %d, want %d", tt.head, tt.u, got, tt.want)
			}
		})
	}
}

// TestFairRoundInterleaves: accounts that queue at once take turns, by
// rounds then by insertion, as River fetches them.
func TestFairRoundInterleaves(t *testing.T) {
	t.Parallel()
	type job struct {
		account string
		round   int64
	}
	usage := map[string]*Usage{"a": {}, "b": {}}
	var jobs []job
	queue := func(account string) {
		u := usage[account]
		r := FairRound(0, *u)
		u.NextRound, u.Queued = r+1, u.Queued+1
		jobs = append(jobs, job{account, r})
	}
	for range 5 {
		queue("a")
	}
	queue("b")
	queue("b")
	// Stable sort by round keeps insertion order within a round.
	var order []string
	for r := int64(0); r < 6; r++ {
		for _, j := range jobs {
			if j.round == r {
				order = append(order, j.account)
			}
		}
	}
	if got, want := strings.Join(order, ""), "ababaaa"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestUsageDelta(t *testing.T) {
	t.Parallel()
	media := []Media{{ContentType: ContentTypeMP3, Bytes: 900}, {ContentType: ContentTypeM3U8, Bytes: 100}}
	queued := &Audio{State: StateUnprocessed}
	processed := &Audio{State: StateProcessed, Media: media}
	requeued := &Audio{State: StateUnprocessed, Media: media}
	failed := &Audio{State: StateFailed, Media: media}
	deleted := &Audio{State: StateUnprocessed, Media: media, Deleted: true}
	tests := []struct {
		name          string
		before, after *Audio
		queued        int
		bytes         int64
	}{
		{"create", nil, queued, 1, 0},
		{"finish", queued, processed, -1, 1000},
		{"new revision", processed, requeued, 1, 0},
		{"fail", requeued, failed, -1, 0},
		{"delete", requeued, deleted, -1, -1000},
		{"import processed", nil, processed, 0, 1000},
		{"unchanged", processed, processed, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, b := UsageDelta(tt.before, tt.after)
			if q != tt.queued || b != tt.bytes {
				t.Errorf("UsageDelta = %d, %d; want %d, %d", q, b, tt.queued, tt.bytes)
			}
		})
	}
}
