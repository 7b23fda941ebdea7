package jobs

import (
	"errors"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func TestOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		attempt int
		err     error
		want    string
	}{
		{"ok", 1, nil, "completed"},
		{"failed, tried again", 1, errors.New("x"), "retry"},
		{"failed at the last attempt", 3, errors.New("x"), "discarded"},
		{"cancelled", 1, river.JobCancel(errors.New("x")), "cancelled"},
		{"snoozed", 3, river.JobSnooze(1), "snoozed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &rivertype.JobRow{Attempt: tt.attempt, MaxAttempts: 3}
			if got := outcome(job, tt.err); got != tt.want {
				t.Errorf("outcome = %q, want %q", got, tt.want)
			}
		})
	}
}
