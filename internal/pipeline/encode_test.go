package pipeline_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/pcm/pcmtest"
	"github.com/narrator/narrator/internal/pipeline"
	"github.com/narrator/narrator/internal/proctest"
)

// longBody is an article of about a minute with the tone engine: a dozen
// sentences in six paragraphs, so several chunks.
var longBody = func() string {
	var b strings.Builder
	for i := range 6 {
		fmt.Fprintf(&b, "<p>Paragraph %d opens with a sentence of some length. It closes with another one, a little longer than the first.</p>\n", i+1)
	}
	return b.String()
}()

// TestChunkedMP3IsSeamless checks the MP3 encoded in chunks against a
// single encoding of the same PCM: it has the same timeline, sample for
// sample, and no more coding noise anywhere, so no click, gap or jump in
// level where chunks meet.
func TestChunkedMP3IsSeamless(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	pcm, data, chunks, err := b.pipe.EncodeForTest(t.Context(), &narrator.Audio{Title: "A long title", Body: longBody}, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 4 {
		t.Fatalf("%d s of audio in %d chunks, want at least 4", len(pcm)/pipeline.SampleRate, chunks)
	}
	one := mp3.NewChunkPool(mp3.Options{SampleRate: pipeline.SampleRate, Bitrate: pipeline.Bitrate, Quality: pipeline.EncoderQuality}, 1, t.TempDir())
	defer one.Close()
	single, err := one.Encode(t.Context(), mp3.Chunk{Samples: pcm, Last: true})
	if err != nil {
		t.Fatal(err)
	}
	got, want := pcmtest.DecodeMP3(t, data, pipeline.SampleRate), pcmtest.DecodeMP3(t, single, pipeline.SampleRate)
	if len(got) != len(want) {
		t.Fatalf("chunked MP3 decodes to %d samples, a single encoding to %d", len(got), len(want))
	}
	const win = pipeline.SampleRate / 100
	gotNoise, wantNoise := pcmtest.NoiseRMS(got, pcm, mp3.Delay, win), pcmtest.NoiseRMS(want, pcm, mp3.Delay, win)
	var loud int
	for i := range gotNoise {
		// 1.5 (-87 dBFS) allows for the rounding of silence.
		if gotNoise[i] > 1.1*wantNoise[i]+1.5 {
			t.Errorf("10 ms from sample %d: noise %.1f, a single encoding's %.1f", i*win, gotNoise[i], wantNoise[i])
		}
		if wantNoise[i] > 100 {
			loud++
		}
	}
	// The comparison means something: the tone is coded with noise.
	if loud == 0 {
		t.Error("a single encoding has no coding noise: the test compares nothing")
	}
}

// cachedChunks counts the encoded chunks in a cache directory.
func cachedChunks(t *testing.T, dir string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".mp3") {
			found[filepath.Base(path)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestEditReencodesOneChunk changes one sentence, making it longer, and
// checks that only the chunk holding it is encoded again (or the two it
// now makes, or the one it joins), and that the
// result is the very MP3 and HLS stream that a rendering from scratch
// gives.
func TestEditReencodesOneChunk(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	audio := &narrator.Audio{Title: "A long title", Body: longBody}
	first, err := b.pipe.Render(t.Context(), audio, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(b.root, "cache")
	before := cachedChunks(t, cache)
	if len(before) < 4 {
		t.Fatalf("%d chunks cached, want at least 4", len(before))
	}
	// Early in the article, so that many chunks follow, all moved later.
	edited := &narrator.Audio{Title: audio.Title, Body: strings.Replace(longBody, "Paragraph 1 opens", "Paragraph 1, which is the first, opens", 1)}
	second, err := b.pipe.Render(t.Context(), edited, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for name := range cachedChunks(t, cache) {
		if !before[name] {
			added = append(added, name)
		}
	}
	// The chunk that holds the edited sentence, or two if the sentence
	// now ends its chunk, or no longer does.
	if len(added) < 1 || len(added) > 2 {
		t.Errorf("the edit encoded %d chunks of %d, want 1 or 2", len(added), len(before))
	}
	read := func(media interface {
		Root() string
	}, key string) []byte {
		data, err := os.ReadFile(filepath.Join(media.Root(), filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	mp3First, mp3Edit := read(b.media, first.Keys[narrator.ContentTypeMP3]), read(b.media, second.Keys[narrator.ContentTypeMP3])
	if len(mp3Edit) <= len(mp3First) {
		t.Errorf("edited MP3 has %d bytes, the first %d: the longer sentence is not in it", len(mp3Edit), len(mp3First))
	}
	fresh := setup(t, false)
	third, err := fresh.pipe.Render(t.Context(), edited, fresh.proj)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mp3Edit, read(fresh.media, third.Keys[narrator.ContentTypeMP3])) {
		t.Error("the edited MP3 differs from a rendering from scratch")
	}
	if p1, p2 := read(b.media, second.Keys[narrator.ContentTypeM3U8]), read(fresh.media, third.Keys[narrator.ContentTypeM3U8]); !bytes.Equal(p1, p2) {
		t.Errorf("the edited playlist differs from a rendering from scratch:\n%s\n%s", p1, p2)
	}
	// The HLS stream carries the MP3's frames: ffmpeg decodes both to
	// the same samples.
	proctest.NeedProgram(t, "ffmpeg", "scripts/deps.sh test")
	decode := func(path string) []byte {
		out, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-").Output()
		if err != nil {
			t.Fatalf("ffmpeg %s: %v", path, err)
		}
		return out
	}
	fromMP3 := decode(filepath.Join(b.media.Root(), filepath.FromSlash(second.Keys[narrator.ContentTypeMP3])))
	fromHLS := decode(filepath.Join(b.media.Root(), filepath.FromSlash(second.Keys[narrator.ContentTypeM3U8])))
	if !bytes.Equal(fromMP3, fromHLS) {
		t.Errorf("the HLS stream decodes to %d bytes, the MP3 to %d, or to other samples", len(fromHLS), len(fromMP3))
	}
}
