package narrator_test

import (
	"testing"

	"github.com/narrator/narrator"
)

func TestInCategory(t *testing.T) {
	t.Parallel()
	a := &narrator.Audio{Metadata: map[string]string{narrator.CategoryKey: "Sport, Local news ,"}}
	for _, tc := range []struct {
		category string
		want     bool
	}{
		{"", true},
		{"sport", true},
		{" local NEWS ", true},
		{"local", false},
		{"news", false},
	} {
		if got := a.InCategory(tc.category); got != tc.want {
			t.Errorf("InCategory(%q) = %v, want %v", tc.category, got, tc.want)
		}
	}
	if (&narrator.Audio{}).InCategory("sport") {
		t.Error("an audio without categories is in sport")
	}
}
