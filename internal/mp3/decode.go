package mp3

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/narrator/narrator/internal/proc"
)

// ErrDecodedTooLarge is returned by Decode when the audio decodes to more
// than the bytes it allows.
var ErrDecodedTooLarge = errors.New("decoded audio over the size allowed")

// Decode decodes an MP3 file with lame (lame --decode, in opts.Sandbox
// when set) and returns it as a WAV file: 16-bit PCM at the MP3's own rate
// and channels, without the encoder's delay and padding. It returns
// ErrDecodedTooLarge, having stopped lame, if the WAV would be over max
// bytes, and lame's error, with its complaint, for input it cannot decode.
func Decode(ctx context.Context, mp3 []byte, max int64, opts Options) ([]byte, error) {
	opts = opts.withDefaults()
	out := &cappedBuffer{max: max}
	stderr := &proc.Tail{Size: 4 << 10, SkipFunc: isLameNoise}
	cmd := opts.Sandbox.Command(sandboxLimits(), "", opts.Lame, "--mp3input", "--decode", "--quiet", "-", "-")
	stream, err := proc.StartStream(ctx, opts.Lame, cmd, out, stderr)
	if err != nil {
		return nil, fmt.Errorf("mp3 decode: %w", err)
	}
	_, werr := stream.Write(mp3)
	if err := stream.Close(); err != nil || werr != nil {
		if errors.Is(err, ErrDecodedTooLarge) || errors.Is(werr, ErrDecodedTooLarge) {
			return nil, ErrDecodedTooLarge
		}
		return nil, fmt.Errorf("mp3 decode: %w", errors.Join(err, werr))
	}
	return out.Bytes(), nil
}

// cappedBuffer is a bytes.Buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len()+len(p)) > b.max {
		return 0, ErrDecodedTooLarge
	}
	return b.Buffer.Write(p)
}
