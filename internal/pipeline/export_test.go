package pipeline

import (
	"bytes"
	"context"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/speak"
)

// EncodeForTest speaks an audio and encodes it as Render does, and returns
// the PCM given to the encoder (its pauses lengthened where chunks end),
// the MP3 and how many chunks it was encoded in.
func (p *Pipeline) EncodeForTest(ctx context.Context, a *narrator.Audio, proj *narrator.Project) (pcm []int16, data []byte, chunks int, err error) {
	units := speak.Script(proj.Language, a.Title, a.Author, a.Body, nil)
	voices, err := p.voicesFor(ctx, proj, units)
	if err != nil {
		return nil, nil, 0, err
	}
	var out bytes.Buffer
	enc := p.newChunkEncoder(ctx, &out)
	rec := &recorder{enc: enc}
	if _, err := p.speak(ctx, units, voices, rec); err != nil {
		enc.Abort()
		return nil, nil, 0, err
	}
	if err := enc.Close(); err != nil {
		return nil, nil, 0, err
	}
	return rec.pcm, out.Bytes(), enc.chunks, nil
}

// recorder keeps what is written to a chunkEncoder.
type recorder struct {
	enc *chunkEncoder
	pcm []int16
}

func (r *recorder) Write(speech []int16, pause int) (int, error) {
	pad, err := r.enc.Write(speech, pause)
	if err != nil {
		return 0, err
	}
	r.pcm = append(r.pcm, speech...)
	r.pcm = append(r.pcm, make([]int16, pause+pad)...)
	return pad, nil
}
