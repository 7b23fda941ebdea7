package narrator

import (
	"testing"
	"time"
)

func TestMediaIsLive(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"abc/live.m3u8", true},
		{"live.m3u8", true},
		{"abc/live.mp3", true},
		{"abc/audio.m3u8", false},
		{"abc/audio.mp3", false},
		{"abc/seg-00000.ts", false},
		{"abc/live.m3u8.bak", false},
		{"live.m3u8/x.ts", false},
	}
	for _, tt := range tests {
		if got := MediaIsLive(tt.key); got != tt.want {
			t.Errorf("MediaIsLive(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestLiveMP3Key(t *testing.T) {
	if got := LiveMP3Key("tok/live.m3u8"); got != "tok/live.mp3" {
		t.Errorf("LiveMP3Key = %q, want tok/live.mp3", got)
	}
}

func TestSynthesisProgress(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := SynthesisProgress{Revision: 2, RenderProgress: RenderProgress{UnitsDone: 10, UnitsTotal: 40}, StartedAt: start}
	if got := p.Share(); got != 0.25 {
		t.Errorf("Share = %v, want 0.25", got)
	}
	if d, ok := p.Remaining(start.Add(5 * time.Second)); !ok || d != 15*time.Second {
		t.Errorf("Remaining after 5 s = %v, %v; want 15s, true", d, ok)
	}
	none := SynthesisProgress{RenderProgress: RenderProgress{UnitsTotal: 40}, StartedAt: start}
	if _, ok := none.Remaining(start.Add(time.Second)); ok {
		t.Error("Remaining with no unit done reported an estimate")
	}
	if got := (SynthesisProgress{}).Share(); got != 0 {
		t.Errorf("Share of nothing = %v", got)
	}
	done := SynthesisProgress{RenderProgress: RenderProgress{UnitsDone: 40, UnitsTotal: 40}, StartedAt: start}
	if d, ok := done.Remaining(start.Add(time.Minute)); !ok || d != 0 {
		t.Errorf("Remaining when done = %v, %v", d, ok)
	}

	tests := []struct {
		name string
		a    Audio
		want bool
	}{
		{"current", Audio{State: StateUnprocessed, Revision: 2}, true},
		{"older revision", Audio{State: StateUnprocessed, Revision: 3}, false},
		{"processed", Audio{State: StateProcessed, Revision: 2}, false},
		{"failed", Audio{State: StateFailed, Revision: 2}, false},
		{"deleted", Audio{State: StateUnprocessed, Revision: 2, Deleted: true}, false},
	}
	for _, tt := range tests {
		if got := p.Current(&tt.a); got != tt.want {
			t.Errorf("%s: Current = %v, want %v", tt.name, got, tt.want)
		}
	}
}
