package narrator

// PageSeqs returns which audios page holds of a project's list of perPage
// audios a page, newest first: those whose number in the project (1 for
// the first audio added to it, never reused) is above after and at most
// upTo, where newest is the highest number given so far (0 for none).
//
// A page is a range of numbers rather than a count of live audios skipped,
// so that a store reads any page with one index probe, however deep: page
// p holds the numbers newest-p*perPage+1 to newest-(p-1)*perPage. A page
// therefore holds fewer than perPage audios when some of its audios were
// deleted or a period filter leaves them out, possibly none before the
// list's end, and every audio is on exactly one page while no audio is
// added. Pages start at 1; a lower page is page 1. A page past the end
// gives after == upTo == 0, a range that holds nothing. It returns an
// EINVALID *Error unless perPage is positive.
func PageSeqs(page, perPage int, newest int64) (after, upTo int64, err error) {
	offset, err := PageOffset(page, perPage)
	if err != nil {
		return 0, 0, err
	}
	if offset >= newest {
		return 0, 0, nil
	}
	upTo = newest - offset
	return max(0, upTo-int64(perPage)), upTo, nil
}
