package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/transcript"
)

func sample() *narrator.Transcript {
	return &narrator.Transcript{
		Duration: 12.3454,
		Sentences: []narrator.TranscriptSentence{
			{Start: 0, End: 2.3099999, Text: "As written.", Words: []narrator.TranscriptWord{
				{Start: 0, End: 0.41, Text: "as"}, {Start: 0.41, End: 1.0004, Text: "written"},
			}, Kind: narrator.SentenceHeading, Block: 1},
			{Start: 2.56, End: 4, Text: `Odd "text" <b>&amp;</b> --> here`, Block: 2},
		},
	}
}

func TestMarshalJSONWireShape(t *testing.T) {
	t.Parallel()
	got, err := transcript.MarshalJSON(sample())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"duration":12.345,"sentences":[` +
		`{"start":0,"end":2.31,"text":"As written.","words":[{"start":0,"end":0.41,"text":"as"},{"start":0.41,"end":1,"text":"written"}],"kind":"heading","block":1},` +
		`{"start":2.56,"end":4,"text":"Odd \"text\" <b>&amp;</b> --> here","block":2}]}` + "\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !json.Valid(got) {
		t.Error("not valid JSON")
	}
}

func TestSecondsJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{0: "0", -0.0001: "0", 1.0005: "1.001", 2.3099999: "2.31", 86400.25: "86400.25", 1e-7: "0", 123456.789: "123456.789"} {
		got, err := json.Marshal(transcript.Seconds(in))
		if err != nil || string(got) != want {
			t.Errorf("Seconds(%v) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := json.Marshal(transcript.Seconds(math.Inf(1))); err == nil {
		t.Error("infinity marshalled")
	}
}

func TestMarshalJSONEmpty(t *testing.T) {
	t.Parallel()
	got, err := transcript.MarshalJSON(&narrator.Transcript{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"duration":0,"sentences":[]}` + "\n"; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	in := &narrator.Transcript{
		Duration: 3725.5,
		Sentences: []narrator.TranscriptSentence{
			{Start: 0.125, End: 1.5, Text: "Ünïcode — “quotes” & 日本語.", Words: []narrator.TranscriptWord{{Start: 0.125, End: 0.5, Text: "unicode"}}},
			{Start: 3600.001, End: 3725, Text: "Line\nbreak\tand\u2028separator", Kind: narrator.SentenceHeading, Block: 3},
		},
	}
	data, err := transcript.MarshalJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := transcript.ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestReadJSONInvalid(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not-json":        `<html>`,
		"wrong-type":      `{"duration":"long"}`,
		"negative":        `{"duration":1,"sentences":[{"start":-1,"end":0,"text":"x"}]}`,
		"ends-early":      `{"duration":1,"sentences":[{"start":2,"end":1,"text":"x"}]}`,
		"word-ends-early": `{"duration":1,"sentences":[{"start":0,"end":1,"text":"x","words":[{"start":0.5,"end":0.1,"text":"x"}]}]}`,
		"negative-length": `{"duration":-3,"sentences":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := transcript.ReadJSON(strings.NewReader(doc)); !errors.Is(err, transcript.ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}

// reTimestampTag matches a WebVTT cue timestamp, the only markup a cue has.
var reTimestampTag = regexp.MustCompile(`<\d{2}:\d{2}:\d{2}\.\d{3}>`)

func TestVTT(t *testing.T) {
	t.Parallel()
	tr := sample()
	tr.Sentences = append(tr.Sentences,
		narrator.TranscriptSentence{Start: 3725.0005, End: 3726.9996, Text: "Two\n\nlines -- > and\r\nmore"},
		narrator.TranscriptSentence{Start: 3727, End: 3728, Text: "WEBVTT NOTE 1 --> 2"},
		narrator.TranscriptSentence{Start: 3728.5, End: 3728.5, Text: "Empty span"},
		// Word timestamps: none at the cue's start, none out of order or past its end.
		narrator.TranscriptSentence{Start: 3730, End: 3731, Text: "Tom & <Jerry> ran off", Words: []narrator.TranscriptWord{
			{Start: 3730, Text: "Tom"}, {Start: 3730.2, Text: "Jerry"}, {Start: 3730.1, Text: "ran"}, {Start: 3731, Text: "off"},
		}},
	)
	got := string(transcript.VTT(tr))
	want := "WEBVTT\n" +
		"\n1\n00:00:00.000 --> 00:00:02.310\nAs <00:00:00.410>written.\n" +
		"\n2\n00:00:02.560 --> 00:00:04.000\nOdd \"text\" &lt;b&gt;&amp;amp;&lt;/b&gt; --&gt; here\n" +
		"\n3\n01:02:05.001 --> 01:02:07.000\nTwo lines -- &gt; and more\n" +
		"\n4\n01:02:07.000 --> 01:02:08.000\nWEBVTT NOTE 1 --&gt; 2\n" +
		"\n5\n01:02:08.500 --> 01:02:08.501\nEmpty span\n" +
		"\n6\n01:02:10.000 --> 01:02:11.000\nTom &amp; <01:02:10.200>&lt;Jerry&gt; ran off\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Whatever the text, a cue is exactly an identifier, a timing line and
	// one payload line, and "-->" appears only in timing lines.
	blocks := strings.Split(strings.TrimSuffix(got, "\n"), "\n\n")
	if blocks[0] != "WEBVTT" {
		t.Errorf("header %q", blocks[0])
	}
	for _, b := range blocks[1:] {
		lines := strings.Split(b, "\n")
		if len(lines) != 3 || !strings.Contains(lines[1], " --> ") || strings.Contains(lines[2], "-->") || strings.ContainsAny(reTimestampTag.ReplaceAllString(lines[2], ""), "<>") {
			t.Errorf("malformed cue %q", b)
		}
	}
}
