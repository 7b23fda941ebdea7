package narrator

import (
	"math"
	"strings"
	"time"
)

// MaxSearchCount bounds how many matches a filtered audio search counts, so
// that a search in a large archive stays fast.
const MaxSearchCount = 10_000

// MaxAudiosByID bounds how many audios can be read by ID at once.
const MaxAudiosByID = 500

// PageOffset returns how many items precede a page of perPage items. Pages
// start at 1; a lower page is page 1. An offset too large for an int64 is
// math.MaxInt64, so that such a page lies past the end. It returns an
// EINVALID *Error unless perPage is positive.
func PageOffset(page, perPage int) (int64, error) {
	if perPage <= 0 {
		return 0, Errorf(EINVALID, "per_page must be positive")
	}
	if page <= 1 {
		return 0, nil
	}
	if int64(page-1) > math.MaxInt64/int64(perPage) {
		return math.MaxInt64, nil
	}
	return int64(page-1) * int64(perPage), nil
}

// SearchPlan is how a store runs a search of a project's live audios: those
// created at or after a time whose title or external ID contains Query,
// ignoring letter case, newest first.
type SearchPlan struct {
	// Query is the search, trimmed; "" matches every audio.
	Query string
	// NoMatch reports that Query is not ValidText, so no audio matches:
	// stores return an empty page and a total of 0 without reading.
	NoMatch bool
	// Offset is how many matches precede the page.
	Offset int64
	// Exact reports that nothing is filtered, so the total is the
	// project's AudioCount. Otherwise stores count matches up to
	// MaxSearchCount. A page whose Offset reaches the total is empty, and
	// stores return it without reading.
	Exact bool
}

// PlanSearch plans a search for query among the audios created at or after
// since (the zero time means all), a page of perPage at a time. It returns
// an EINVALID *Error unless perPage is positive.
func PlanSearch(query string, since time.Time, page, perPage int) (SearchPlan, error) {
	offset, err := PageOffset(page, perPage)
	if err != nil {
		return SearchPlan{}, err
	}
	query = strings.TrimSpace(query)
	return SearchPlan{Query: query, NoMatch: !ValidText(query), Offset: offset, Exact: query == "" && since.IsZero()}, nil
}

// ValidateAudioIDs checks a set of audio IDs to be read at once: at most
// MaxAudiosByID. It returns an EINVALID *Error otherwise.
func ValidateAudioIDs(ids []int64) error {
	if len(ids) > MaxAudiosByID {
		return Errorf(EINVALID, "at most %d audios can be read at once", MaxAudiosByID)
	}
	return nil
}
