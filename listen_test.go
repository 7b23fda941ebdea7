package narrator_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestValidateListenEvent(t *testing.T) {
	t.Parallel()
	for _, e := range narrator.ListenEvents() {
		if err := narrator.ValidateListenEvent(e); err != nil {
			t.Errorf("ValidateListenEvent(%q) = %v", e, err)
		}
	}
	for _, e := range []string{"", "Play", "progress_100", "load ", "pause"} {
		if err := narrator.ValidateListenEvent(e); narrator.ErrorCode(err) != narrator.EINVALID {
			t.Errorf("ValidateListenEvent(%q) = %v, want EINVALID", e, err)
		}
	}
}

func TestListenCounts(t *testing.T) {
	t.Parallel()
	var c narrator.ListenCounts
	for i, e := range narrator.ListenEvents() {
		c.Add(e, int64(10-i))
	}
	c.Add("unknown", 99)
	want := narrator.ListenCounts{Loads: 10, Plays: 9, Progress25: 8, Progress50: 7, Progress75: 6, Completes: 5}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([4]float64{8.0 / 9, 7.0 / 9, 6.0 / 9, 5.0 / 9}, c.Reach()); diff != "" {
		t.Errorf("reach (-want +got):\n%s", diff)
	}
	if got := (narrator.ListenCounts{Progress25: 3}).Reach(); got != [4]float64{} {
		t.Errorf("reach without plays = %v, want zeros", got)
	}
	if got := (narrator.ListenCounts{Plays: 1, Progress25: 3}).Reach(); got[0] != 1 {
		t.Errorf("reach above the plays = %v, want capped at 1", got)
	}
}

func TestListenDay(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 1, 30, 0, 0, time.FixedZone("CET", 3600))
	if got, want := narrator.ListenDay(at), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("ListenDay(%v) = %v, want %v", at, got, want)
	}
	at = time.Date(2026, 3, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600))
	if got, want := narrator.ListenDay(at), time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("ListenDay(%v) = %v, want %v (the UTC day)", at, got, want)
	}
}
