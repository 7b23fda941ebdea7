package hls_test

import (
	"bytes"
	"os/exec"
	"testing"
	"time"

	"github.com/narrator/narrator/internal/pcm"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/proctest"
)

// TestSpeechPipeline runs real speech through every step the pipeline
// uses: espeak-ng's WAV on a pipe, DecodeWAV, Resample, TrimSilence,
// Normalize, pauses, the streaming encoder and the segmenter.
func TestSpeechPipeline(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "espeak-ng", "apt-get install espeak-ng")
	proctest.NeedProgram(t, "lame", "apt-get install lame")
	sentences := []string{
		"Narrator turns articles into speech.",
		"Each sentence is synthesised on its own, then the pieces are joined in order.",
		"The result is encoded as MP3 and packaged for streaming.",
		"A listener can start playing before the whole file has loaded.",
		"That is all there is to it.",
		"Thank you for listening to this test.",
	}
	st := &store{}
	enc := newEncoding(t, st.put)
	var pcmSamples int64
	for _, s := range sentences {
		out, err := exec.CommandContext(t.Context(), "espeak-ng", "--stdout", s).Output()
		if err != nil {
			t.Fatalf("espeak-ng: %v", err)
		}
		samples, r, err := pcm.DecodeWAV(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		samples = pcm.Normalize(pcm.TrimSilence(pcm.Resample(samples, r, rate), rate), rate, pcm.DefaultTargetDBFS)
		for _, chunk := range [][]int16{samples, make([]int16, pcm.Samples(400*time.Millisecond, rate))} {
			if err := enc.Write(chunk); err != nil {
				t.Fatal(err)
			}
			pcmSamples += int64(len(chunk))
		}
	}
	playlist := enc.finish(t)
	entries := check(t, enc.mp3.Bytes(), playlist, st, 6*time.Second)
	if len(entries) < 2 {
		t.Errorf("%d segments for %v of speech, want several", len(entries), pcm.Duration(int(pcmSamples), rate))
	}

	// The MP3 decodes to speech at the target loudness, as long as the PCM.
	left := pcmtest.DecodeMP3(t, enc.mp3.Bytes(), rate)
	if got := int64(len(left)); got < pcmSamples || got > pcmSamples+1105+2*1152 {
		t.Errorf("decoded %d samples for %d samples of PCM", got, pcmSamples)
	}
	if l, ok := pcm.Loudness(left, rate); !ok || l < pcm.DefaultTargetDBFS-2 || l > pcm.DefaultTargetDBFS+2 {
		t.Errorf("decoded loudness %.1f dBFS, want about %.0f", l, pcm.DefaultTargetDBFS)
	}
}
