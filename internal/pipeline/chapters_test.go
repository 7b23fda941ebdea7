package pipeline_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// TestRenderChapters renders an article with three headings and checks its
// chapters file: in the JSON chapters format, the title at 0, then each
// heading starting where the transcript has it, which is where its sound
// starts in the decoded MP3, within 0.5 s.
func TestRenderChapters(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	article := `<p>An opening paragraph. It has two sentences.</p>
<h2>The first heading</h2><p>Text under it.</p>
<h3>A second heading. In two sentences</h3><p>More text here, a little longer than the rest.</p>
<h2>The third heading</h2><p>The end.</p>`
	r, err := b.pipe.Render(t.Context(), &narrator.Audio{Title: "Chapters <i>test</i>", Author: "Jo", Body: article}, b.proj)
	if err != nil {
		t.Fatal(err)
	}
	mp3Key := r.Keys[narrator.ContentTypeMP3]
	tr := readTranscript(t, b.media, mp3Key)
	f, _, err := b.media.Open(t.Context(), narrator.ChaptersKey(mp3Key))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc struct {
		Version  string `json:"version"`
		Chapters []struct {
			StartTime *float64 `json:"startTime"`
			Title     string   `json:"title"`
		} `json:"chapters"`
	}
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, c := range doc.Chapters {
		titles = append(titles, c.Title)
	}
	want := []string{"Chapters <i>test</i>", "The first heading", "A second heading. In two sentences", "The third heading"}
	if doc.Version != "1.2.0" || !cmp.Equal(want, titles) {
		t.Fatalf("version %q, chapters %q; want 1.2.0, %q", doc.Version, titles, want)
	}
	found := onsets(decodeMP3(t, b.media, mp3Key), 100*time.Millisecond, -40)
	if len(found) != len(tr.Sentences) {
		t.Fatalf("%d onsets for %d sentences", len(found), len(tr.Sentences))
	}
	for i, c := range doc.Chapters {
		if c.StartTime == nil {
			t.Fatalf("chapter %d has no startTime", i)
		}
		if i == 0 {
			if *c.StartTime != 0 {
				t.Errorf("the title's chapter starts at %v", *c.StartTime)
			}
			continue
		}
		k := -1
		for j, s := range tr.Sentences {
			if s.Kind == narrator.SentenceHeading && c.Title[:10] == s.Text[:10] {
				k = j
				break
			}
		}
		if k < 0 {
			t.Fatalf("chapter %q: no heading in the transcript", c.Title)
		}
		if d := math.Abs(*c.StartTime - tr.Sentences[k].Start); d > 0.001 {
			t.Errorf("chapter %q starts at %.3f s, its heading at %.3f s", c.Title, *c.StartTime, tr.Sentences[k].Start)
		}
		if d := math.Abs(*c.StartTime - found[k]); d > 0.5 {
			t.Errorf("chapter %q starts at %.3f s, its heading's sound at %.3f s", c.Title, *c.StartTime, found[k])
		}
	}
}
