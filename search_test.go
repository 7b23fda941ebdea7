package narrator_test

import (
	"math"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestPageOffset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		page, perPage int
		want          int64
		code          string
	}{
		{1, 50, 0, ""},
		{0, 50, 0, ""},
		{-3, 50, 0, ""},
		{3, 50, 100, ""},
		{math.MaxInt, 50, math.MaxInt64, ""},
		{1, 0, 0, narrator.EINVALID},
		{2, -1, 0, narrator.EINVALID},
	} {
		got, err := narrator.PageOffset(tc.page, tc.perPage)
		if got != tc.want || narrator.ErrorCode(err) != tc.code {
			t.Errorf("PageOffset(%d, %d) = %d, %v; want %d, code %q", tc.page, tc.perPage, got, err, tc.want, tc.code)
		}
	}
}

func TestPlanSearch(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		query string
		since time.Time
		want  narrator.SearchPlan
	}{
		{"everything", "", time.Time{}, narrator.SearchPlan{Offset: 20, Exact: true}},
		{"blank", " \t", time.Time{}, narrator.SearchPlan{Offset: 20, Exact: true}},
		{"query", " news ", time.Time{}, narrator.SearchPlan{Query: "news", Offset: 20}},
		{"period", "", since, narrator.SearchPlan{Offset: 20}},
		{"NUL", "a\x00", time.Time{}, narrator.SearchPlan{Query: "a\x00", NoMatch: true, Offset: 20}},
		{"invalid UTF-8", "\xff", time.Time{}, narrator.SearchPlan{Query: "\xff", NoMatch: true, Offset: 20}},
	} {
		got, err := narrator.PlanSearch(tc.query, tc.since, 3, 10)
		if err != nil || got != tc.want {
			t.Errorf("%s: PlanSearch = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := narrator.PlanSearch("", time.Time{}, 1, 0); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("perPage 0: %v, want EINVALID", err)
	}
	if err := narrator.ValidateAudioIDs(make([]int64, narrator.MaxAudiosByID)); err != nil {
		t.Errorf("ValidateAudioIDs(%d IDs): %v", narrator.MaxAudiosByID, err)
	}
	if err := narrator.ValidateAudioIDs(make([]int64, narrator.MaxAudiosByID+1)); narrator.ErrorCode(err) != narrator.EINVALID {
		t.Errorf("ValidateAudioIDs(%d IDs): %v, want EINVALID", narrator.MaxAudiosByID+1, err)
	}
}
