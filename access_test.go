package narrator_test

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// The test vector of docs/api.md ("Signed projects"): a publisher checks
// their own signing code against it.
const (
	docSecret = "nes_c2VjcmV0LWZvci10aGUtZG9jcy1vbmx5LWV4YW1wbGU"
	docToken  = "1798761600.F-dAIoapjR0I8M858mHGhUU5D11qlaEXkns6bZR7FKE"
)

func TestSignEmbedVector(t *testing.T) {
	t.Parallel()
	got := narrator.SignEmbed(docSecret, 1, narrator.EmbedSubject("post-42", ""), time.Unix(1798761600, 0))
	if got != docToken {
		t.Fatalf("SignEmbed = %q, want the documented %q", got, docToken)
	}
}

func TestCheckEmbedToken(t *testing.T) {
	t.Parallel()
	before := time.Unix(1798761600-1, 0)
	subject := narrator.EmbedSubject("post-42", "")
	far := narrator.SignEmbed(docSecret, 1, subject, time.Unix(99999999999999, 0))
	tests := []struct {
		name    string
		secret  string
		project int64
		subject string
		token   string
		now     time.Time
		want    bool
	}{
		{"valid", docSecret, 1, subject, docToken, before, true},
		{"expired", docSecret, 1, subject, docToken, time.Unix(1798761600, 0), false},
		{"other project", docSecret, 2, subject, docToken, before, false},
		{"other audio", docSecret, 1, narrator.EmbedSubject("post-43", ""), docToken, before, false},
		{"same id as a url", docSecret, 1, narrator.EmbedSubject("", "post-42"), docToken, before, false},
		{"other secret", docSecret + "x", 1, subject, docToken, before, false},
		{"no secret", "", 1, subject, docToken, before, false},
		{"later expiry, same signature", docSecret, 1, subject, "1798761601.F-dAIoapjR0I8M858mHGhUU5D11qlaEXkns6bZR7FKE", before, false},
		{"expiry with a leading zero", docSecret, 1, subject, "01798761600.F-dAIoapjR0I8M858mHGhUU5D11qlaEXkns6bZR7FKE", before, false},
		{"no signature", docSecret, 1, subject, "1798761600", before, false},
		{"empty", docSecret, 1, subject, "", before, false},
		{"expiring a year ahead", docSecret, 1, subject, docToken, time.Unix(1798761600, 0).Add(-narrator.MaxEmbedTokenLife), true},
		{"expiring further ahead", docSecret, 1, subject, docToken, time.Unix(1798761600-1, 0).Add(-narrator.MaxEmbedTokenLife), false},
		{"expiring in the year 5138", docSecret, 1, subject, far, before, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := narrator.CheckEmbedToken(tt.secret, tt.project, tt.subject, tt.token, tt.now); got != tt.want {
				t.Errorf("CheckEmbedToken = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEmbedSubjectDropsFragment(t *testing.T) {
	t.Parallel()
	if got, want := narrator.EmbedSubject("", "https://news.example/a#top"), "url:https://news.example/a"; got != want {
		t.Errorf("EmbedSubject = %q, want %q", got, want)
	}
}

func TestProjectAccessValidate(t *testing.T) {
	t.Parallel()
	a := narrator.ProjectAccess{Mode: narrator.AccessPublic, AllowedOrigins: []string{"HTTPS://News.Example:443/", "https://news.example", "http://localhost:8080"}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := a.FrameAncestors(), "https://news.example http://localhost:8080"; got != want {
		t.Errorf("FrameAncestors = %q, want %q", got, want)
	}
	for _, bad := range []narrator.ProjectAccess{
		{Mode: "open"},
		{Mode: narrator.AccessSigned},
		{Mode: narrator.AccessPublic, AllowedOrigins: []string{"https://news.example/path"}},
		{Mode: narrator.AccessPublic, AllowedOrigins: []string{"news.example"}},
		{Mode: narrator.AccessPublic, AllowedOrigins: []string{"ftp://news.example"}},
	} {
		if err := bad.Validate(); narrator.ErrorCode(err) != narrator.EINVALID {
			t.Errorf("Validate(%+v) = %v, want EINVALID", bad, err)
		}
	}
}

func TestProjectAccessAdmits(t *testing.T) {
	t.Parallel()
	now := time.Unix(1798761600-60, 0)
	subject := narrator.EmbedSubject("post-42", "")
	public := narrator.DefaultAccess(1)
	restricted := narrator.ProjectAccess{ProjectID: 1, Mode: narrator.AccessPublic, AllowedOrigins: []string{"https://news.example"}}
	signed := narrator.ProjectAccess{ProjectID: 1, Mode: narrator.AccessSigned, SigningSecret: docSecret}
	tests := []struct {
		name   string
		access narrator.ProjectAccess
		visit  narrator.EmbedVisit
		want   bool
	}{
		{"public", public, narrator.EmbedVisit{Subject: subject, Origin: "https://evil.example"}, true},
		{"allowed origin", restricted, narrator.EmbedVisit{Subject: subject, Origin: "https://news.example"}, true},
		{"unknown origin", restricted, narrator.EmbedVisit{Subject: subject}, true},
		{"foreign origin", restricted, narrator.EmbedVisit{Subject: subject, Origin: "https://evil.example"}, false},
		{"signed with token", signed, narrator.EmbedVisit{Subject: subject, Token: docToken}, true},
		{"signed without token", signed, narrator.EmbedVisit{Subject: subject}, false},
		{"signed, token of another audio", signed, narrator.EmbedVisit{Subject: narrator.EmbedSubject("post-7", ""), Token: docToken}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.access.Admits(tt.visit, now); got != tt.want {
				t.Errorf("Admits = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPublication(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	a := &narrator.Audio{ID: 7}
	tests := []struct {
		name      string
		pub       narrator.Publication
		now       time.Time
		valid     bool
		listed    bool
		effective string
	}{
		{"default", narrator.DefaultPublication(7), at, true, true, narrator.PublicationPublished},
		{"draft", narrator.Publication{AudioID: 7, State: narrator.PublicationDraft}, at, true, false, narrator.PublicationDraft},
		{"scheduled, before", narrator.Publication{AudioID: 7, State: narrator.PublicationScheduled, PublishAt: at}, at.Add(-time.Second), true, false, narrator.PublicationScheduled},
		{"scheduled, due", narrator.Publication{AudioID: 7, State: narrator.PublicationScheduled, PublishAt: at}, at, true, true, narrator.PublicationPublished},
		{"another audio's", narrator.DefaultPublication(8), at, true, false, narrator.PublicationPublished},
		{"scheduled without a time", narrator.Publication{AudioID: 7, State: narrator.PublicationScheduled}, at, false, false, narrator.PublicationScheduled},
		{"draft with a time", narrator.Publication{AudioID: 7, State: narrator.PublicationDraft, PublishAt: at}, at, false, false, narrator.PublicationDraft},
		{"unknown state", narrator.Publication{AudioID: 7, State: "hidden"}, at, false, false, "hidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.pub.Validate(); (err == nil) != tt.valid {
				t.Errorf("Validate = %v, want valid %v", err, tt.valid)
			}
			if got := narrator.Listed(a, tt.pub, tt.now); got != tt.listed {
				t.Errorf("Listed = %v, want %v", got, tt.listed)
			}
			if got := tt.pub.Effective(tt.now).State; got != tt.effective {
				t.Errorf("Effective = %q, want %q", got, tt.effective)
			}
		})
	}
	if narrator.Listed(&narrator.Audio{ID: 7, Deleted: true}, narrator.DefaultPublication(7), at) {
		t.Error("a deleted audio is listed")
	}
	drafts := narrator.ProjectAccess{DraftNewAudios: true}
	if got := drafts.NewPublication(7).State; got != narrator.PublicationDraft {
		t.Errorf("NewPublication with DraftNewAudios = %q, want draft", got)
	}
}

func TestCheckEmbedTokenExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1798761600, 0)
	tests := []struct {
		name  string
		token string
		want  string
	}{
		{"a year ahead", narrator.SignEmbed(docSecret, 1, "s", now.Add(narrator.MaxEmbedTokenLife)), ""},
		{"a second more", narrator.SignEmbed(docSecret, 1, "s", now.Add(narrator.MaxEmbedTokenLife+time.Second)), narrator.EINVALID},
		{"the year 5138", "99999999999999.sig", narrator.EINVALID},
		{"expired", narrator.SignEmbed(docSecret, 1, "s", now.Add(-time.Hour)), ""},
		{"not a number", "soon.sig", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := narrator.CheckEmbedTokenExpiry(tt.token, now)
			if got := narrator.ErrorCode(err); err != nil && got != tt.want || err == nil && tt.want != "" {
				t.Errorf("CheckEmbedTokenExpiry(%q) = %v, want code %q", tt.token, err, tt.want)
			}
		})
	}
}
