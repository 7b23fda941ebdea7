package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/narrator/narrator"
	fetcher "github.com/narrator/narrator/internal/fetch"
)

// artworkChecker fetches a podcast image through the guarded fetcher,
// once, when a feed's image URL is saved, and checks it
// (narrator.CheckArtwork). The fetcher's size limit bounds the read.
type artworkChecker struct{ client *fetcher.Client }

// CheckArtwork implements web.ArtworkChecker.
func (a artworkChecker) CheckArtwork(ctx context.Context, url string) error {
	resp, err := a.client.Get(ctx, fetcher.Request{URL: url, Types: []string{"image/jpeg", "image/png"}, What: "podcast image"})
	var ferr *fetcher.Error
	switch {
	case errors.As(err, &ferr):
		return narrator.Errorf(narrator.EINVALID, "the podcast image could not be checked: %s", ferr.Reason)
	case err != nil:
		return fmt.Errorf("check podcast image: %w", err)
	}
	return narrator.CheckArtwork(resp.Body)
}
