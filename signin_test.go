package narrator_test

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestCheckSignInLimits(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	limits := []narrator.SignInLimit{{Key: "pair", Max: 2, Window: 10 * time.Minute}, {Key: "ip", Max: 3, Window: 10 * time.Minute}}
	tests := []struct {
		name   string
		recent [][]time.Time
		want   *narrator.SignInRefusal
	}{
		{"room", [][]time.Time{{ago(time.Minute)}, {ago(time.Minute)}}, nil},
		{"first full", [][]time.Time{{ago(time.Minute), ago(4 * time.Minute)}, nil}, &narrator.SignInRefusal{Limit: 0, Wait: 6 * time.Minute}},
		{"second full", [][]time.Time{nil, {ago(time.Minute), ago(2 * time.Minute), ago(3 * time.Minute)}}, &narrator.SignInRefusal{Limit: 1, Wait: 7 * time.Minute}},
		{"oldest just left", [][]time.Time{{ago(time.Minute), ago(10 * time.Minute)}, nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := narrator.CheckSignInLimits(limits, now, tt.recent)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("CheckSignInLimits = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckPronunciationCount(t *testing.T) {
	t.Parallel()
	if err := narrator.CheckPronunciationCount(narrator.MaxPronunciations-1, false); err != nil {
		t.Errorf("one below the limit: %v", err)
	}
	if err := narrator.CheckPronunciationCount(narrator.MaxPronunciations, false); narrator.ErrorCode(err) != narrator.ECONFLICT {
		t.Errorf("at the limit: %v, want ECONFLICT", err)
	}
	if err := narrator.CheckPronunciationCount(narrator.MaxPronunciations, true); err != nil {
		t.Errorf("replacing at the limit: %v", err)
	}
}
