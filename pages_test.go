package narrator

import "testing"

func TestPageSeqs(t *testing.T) {
	for _, tc := range []struct {
		name                string
		page, perPage       int
		newest              int64
		wantAfter, wantUpTo int64
	}{
		{"first page", 1, 50, 120, 70, 120},
		{"page below 1 is page 1", -3, 50, 120, 70, 120},
		{"middle page", 2, 50, 120, 20, 70},
		{"last page is short", 3, 50, 120, 0, 20},
		{"past the end", 4, 50, 120, 0, 0},
		{"empty project", 1, 50, 0, 0, 0},
		{"exact fit", 2, 50, 100, 0, 50},
		{"offset overflows", 1 << 62, 50, 120, 0, 0},
		{"deep page", 19_999, 50, 1_000_000, 50, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, upTo, err := PageSeqs(tc.page, tc.perPage, tc.newest)
			if err != nil || after != tc.wantAfter || upTo != tc.wantUpTo {
				t.Errorf("PageSeqs(%d, %d, %d) = %d, %d, %v; want %d, %d", tc.page, tc.perPage, tc.newest, after, upTo, err, tc.wantAfter, tc.wantUpTo)
			}
		})
	}
	if _, _, err := PageSeqs(1, 0, 10); ErrorCode(err) != EINVALID {
		t.Errorf("PageSeqs with perPage 0: %v, want EINVALID", err)
	}
}

// TestPageSeqsCoverEachNumberOnce checks that the pages of a list hold
// every number from 1 to newest exactly once.
func TestPageSeqsCoverEachNumberOnce(t *testing.T) {
	for _, newest := range []int64{0, 1, 49, 50, 51, 149} {
		seen := make([]int, newest+1)
		for page := 1; page <= int(newest)/7+2; page++ {
			after, upTo, err := PageSeqs(page, 7, newest)
			if err != nil {
				t.Fatal(err)
			}
			for n := after + 1; n <= upTo; n++ {
				seen[n]++
			}
		}
		for n := int64(1); n <= newest; n++ {
			if seen[n] != 1 {
				t.Errorf("newest %d: number %d is on %d pages, want 1", newest, n, seen[n])
			}
		}
	}
}
