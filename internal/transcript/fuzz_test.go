package transcript_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/narrator/narrator/internal/transcript"
)

// FuzzReadJSON reads any bytes as a transcript document. A document it
// accepts must write back (MarshalJSON), read again, and write back to the
// same bytes, and make WebVTT with one cue per sentence; a document it
// refuses gives an error that matches ErrInvalid.
func FuzzReadJSON(f *testing.F) {
	for _, s := range []string{
		`{"duration":2.5,"sentences":[{"start":0,"end":1.25,"text":"Hello.","words":[{"start":0,"end":0.5,"text":"hello"}]},{"start":1.3,"end":2.4,"text":"A --> b <c>"}]}`,
		`{"duration":0,"sentences":[]}`, `{"duration":-1}`, `{"sentences":[{"start":2,"end":1}]}`,
		`{"duration":1e308}`, `{"duration":0.0004}`, `[]`, `null`, ``, `{"duration":"1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := transcript.ReadJSON(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, transcript.ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		out, err := transcript.MarshalJSON(tr)
		if err != nil {
			t.Fatalf("MarshalJSON of an accepted document: %v", err)
		}
		again, err := transcript.ReadJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("ReadJSON of its own output %s: %v", out, err)
		}
		out2, err := transcript.MarshalJSON(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("writing back changed the document:\n%s\n%s (%v)", out, out2, err)
		}
		vtt := string(transcript.VTT(again))
		if !strings.HasPrefix(vtt, "WEBVTT\n") || strings.Count(vtt, " --> ") != len(again.Sentences) {
			t.Fatalf("VTT of %d sentences:\n%s", len(again.Sentences), vtt)
		}
	})
}
