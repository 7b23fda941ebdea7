package web

import (
	"testing"
	"time"
)

func TestEvery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Minute, "Every 10 minutes"},
		{time.Minute, "Every minute"},
		{2 * time.Minute, "Every 2 minutes"},
		{time.Hour, "Every hour"},
		{90 * time.Minute, "Every 1 hour 30 minutes"},
		{2 * time.Hour, "Every 2 hours"},
		{24 * time.Hour, "Every day"},
		{25*time.Hour + time.Minute, "Every 1 day 1 hour 1 minute"},
		{48 * time.Hour, "Every 2 days"},
		{90 * time.Second, "Every 1 minute 30 seconds"},
		{time.Second, "Every second"},
		{1500 * time.Millisecond, "Every 1 second"},
		{0, "Every 0 seconds"},
	} {
		if got := every(tc.d); got != tc.want {
			t.Errorf("every(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
