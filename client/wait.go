package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrAudioFailed is returned, wrapped with the reason, by WaitProcessed
// when the audio's synthesis failed.
var ErrAudioFailed = errors.New("narrator: audio synthesis failed")

// WaitOptions tunes WaitProcessed's polling.
type WaitOptions struct {
	// Initial is the first delay between polls; 250 ms when zero.
	Initial time.Duration
	// Max caps the delay, which doubles after each poll; 5 s when zero.
	Max time.Duration
}

// WaitProcessed polls an audio until it is processed, and returns it. The
// delay between polls starts at opt.Initial and doubles up to opt.Max.
//
// It returns the audio and an error wrapping ErrAudioFailed if synthesis
// failed, the last audio seen and ctx's error if ctx ends first, and any
// error of GetAudio (a deleted audio is a 404 *Error) at once.
func (c *Client) WaitProcessed(ctx context.Context, projectID int64, ref string, opt WaitOptions) (*Audio, error) {
	delay, ceiling := opt.Initial, opt.Max
	if delay <= 0 {
		delay = 250 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 5 * time.Second
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		a, err := c.GetAudio(ctx, projectID, ref)
		if err != nil {
			return nil, err
		}
		switch a.State {
		case StateProcessed:
			return a, nil
		case StateFailed:
			return a, fmt.Errorf("audio %d: %w: %s", a.ID, ErrAudioFailed, a.Error)
		}
		timer.Reset(delay)
		select {
		case <-ctx.Done():
			return a, fmt.Errorf("wait for audio %d: %w", a.ID, ctx.Err())
		case <-timer.C:
		}
		delay = min(2*delay, ceiling)
	}
}
