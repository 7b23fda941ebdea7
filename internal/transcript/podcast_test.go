package transcript_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/transcript"
)

// specTranscript is the Podcasting 2.0 JSON transcript as the podcast
// namespace specifies it (docs/examples/transcripts/transcripts.md):
// version and segments, each with startTime, endTime, body and an
// optional speaker. Decoding with DisallowUnknownFields catches any
// other field.
type specTranscript struct {
	Version  string `json:"version"`
	Segments []struct {
		Speaker   string   `json:"speaker,omitempty"`
		StartTime *float64 `json:"startTime"`
		EndTime   *float64 `json:"endTime"`
		Body      *string  `json:"body"`
	} `json:"segments"`
}

func TestPodcastJSON(t *testing.T) {
	t.Parallel()
	in := &narrator.Transcript{
		Duration: 6,
		Sentences: []narrator.TranscriptSentence{
			// Words as written, without punctuation (the pipeline's writtenWords).
			{Start: 0.1, End: 2.3099999, Text: "“Quoted,” as   written.", Words: []narrator.TranscriptWord{
				{Start: 0.1, End: 0.6, Text: "Quoted"}, {Start: 0.6, End: 0.9, Text: "as"}, {Start: 0.9, End: 2.2, Text: "written"},
			}},
			{Start: 2.5, End: 4, Text: "No words <b>here</b> & --> there."},
			{Start: 4, End: 5, Text: "— Lead dash.", Words: []narrator.TranscriptWord{{Start: 4.1, End: 4.5, Text: "Lead"}, {Start: 4.5, End: 4.9, Text: "dash"}}},
			{Start: 5, End: 5, Text: "  "},
		},
	}
	got, err := transcript.MarshalPodcastJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"1.0.0","segments":[` +
		`{"startTime":0.1,"endTime":0.6,"body":"“Quoted,”"},{"startTime":0.6,"endTime":0.9,"body":"as"},{"startTime":0.9,"endTime":2.2,"body":"written.\n"},` +
		`{"startTime":2.5,"endTime":4,"body":"No words <b>here</b> & --> there.\n"},` +
		`{"startTime":4.1,"endTime":4.5,"body":"— Lead"},{"startTime":4.5,"endTime":4.9,"body":"dash.\n"}]}` + "\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var spec specTranscript
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("not in the spec's shape: %v", err)
	}
	if spec.Version != "1.0.0" || len(spec.Segments) != 6 {
		t.Fatalf("version %q, %d segments", spec.Version, len(spec.Segments))
	}
	last := 0.0
	for i, s := range spec.Segments {
		if s.StartTime == nil || s.EndTime == nil || s.Body == nil || *s.EndTime < *s.StartTime || *s.StartTime < last {
			t.Errorf("segment %d: %+v", i, s)
			continue
		}
		last = *s.StartTime
	}
}

func TestPodcastJSONEmpty(t *testing.T) {
	t.Parallel()
	got, err := transcript.MarshalPodcastJSON(&narrator.Transcript{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"version":"1.0.0","segments":[]}`+"\n", string(got)); diff != "" {
		t.Error(diff)
	}
}

// specChapters is the Podcasting 2.0 JSON chapters format as the podcast
// namespace specifies it (docs/examples/chapters/jsonChapters.md): a
// version and chapters, each with a startTime and optional fields, of
// which Narrator writes the title.
type specChapters struct {
	Version  string `json:"version"`
	Chapters []struct {
		StartTime *float64 `json:"startTime"`
		Title     string   `json:"title"`
		Img       string   `json:"img"`
		URL       string   `json:"url"`
		TOC       *bool    `json:"toc"`
		EndTime   *float64 `json:"endTime"`
	} `json:"chapters"`
}

func TestMarshalChapters(t *testing.T) {
	t.Parallel()
	got, err := transcript.MarshalChapters([]narrator.Chapter{{Start: 0, Title: "Title <&>"}, {Start: 12.3456, Title: "Two"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"1.2.0","chapters":[{"startTime":0,"title":"Title <&>"},{"startTime":12.346,"title":"Two"}]}` + "\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var spec specChapters
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil || spec.Version != "1.2.0" || len(spec.Chapters) != 2 || spec.Chapters[1].StartTime == nil {
		t.Errorf("not in the spec's shape: %+v, %v", spec, err)
	}
}
