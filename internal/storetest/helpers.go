package storetest

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// mustAccount creates an account.
func mustAccount(tb testing.TB, s Store, name string) *narrator.Account {
	tb.Helper()
	a := &narrator.Account{Name: name}
	if err := s.CreateAccount(tb.Context(), a); err != nil {
		tb.Fatalf("CreateAccount(%q): %v", name, err)
	}
	return a
}

// newProject returns a valid project of an account, not yet stored.
func newProject(accountID int64, title string) *narrator.Project {
	return &narrator.Project{
		AccountID:  accountID,
		Title:      title,
		Type:       narrator.ProjectTypeAPI,
		Language:   "en_US",
		TitleVoice: "Mark",
		BodyVoice:  "Sally",
	}
}

// mustProject creates a project in a new account.
func mustProject(tb testing.TB, s Store) *narrator.Project {
	tb.Helper()
	return mustProjectOf(tb, s, mustAccount(tb, s, "Acme").ID)
}

// mustProjectOf creates a project of an account.
func mustProjectOf(tb testing.TB, s Store, accountID int64) *narrator.Project {
	tb.Helper()
	p := newProject(accountID, "News")
	if err := s.CreateProject(tb.Context(), p); err != nil {
		tb.Fatalf("CreateProject: %v", err)
	}
	return p
}

// newAudio returns a valid audio of a project, not yet stored.
func newAudio(projectID int64, externalID string) *narrator.Audio {
	return &narrator.Audio{
		ProjectID:  projectID,
		ExternalID: externalID,
		Title:      "A title",
		Body:       "Some body text.",
		Author:     "Ann Author",
		ArticleURL: "https://example.com/a",
		Metadata:   map[string]string{"section": "news"},
	}
}

// mustCreateAudio stores a and fails unless it was created.
func mustCreateAudio(tb testing.TB, s Store, a *narrator.Audio) *narrator.Audio {
	tb.Helper()
	created, err := s.CreateAudio(tb.Context(), a)
	if err != nil {
		tb.Fatalf("CreateAudio: %v", err)
	}
	if !created {
		tb.Fatalf("CreateAudio: created = false, want true")
	}
	return a
}

// mustAudio creates an audio of a project.
func mustAudio(tb testing.TB, s Store, projectID int64, externalID string) *narrator.Audio {
	tb.Helper()
	return mustCreateAudio(tb, s, newAudio(projectID, externalID))
}

// mustFindAudio finds a live audio.
func mustFindAudio(tb testing.TB, s Store, projectID int64, ref string) *narrator.Audio {
	tb.Helper()
	a, err := s.FindAudio(tb.Context(), projectID, ref)
	if err != nil {
		tb.Fatalf("FindAudio(%d, %q): %v", projectID, ref, err)
	}
	return a
}

// mustFinish finishes an audio's current revision with keys derived from
// mustLease takes or renews the synthesis lease of an audio's revision for
// holder, until until, and fails tb unless it is granted.
func mustLease(tb testing.TB, s Store, audioID int64, revision int, holder string, until time.Time) {
	tb.Helper()
	if ok, err := s.LeaseSynthesis(tb.Context(), audioID, revision, holder, until); err != nil || !ok {
		tb.Fatalf("LeaseSynthesis(%d, %d, %s) = %v, %v; want it granted", audioID, revision, holder, ok, err)
	}
}

// tag.
func mustFinish(tb testing.TB, s Store, a *narrator.Audio, tag string) map[string]string {
	tb.Helper()
	keys := map[string]string{
		narrator.ContentTypeMP3:  fmt.Sprintf("%d/%s/audio.mp3", a.ID, tag),
		narrator.ContentTypeM3U8: fmt.Sprintf("%d/%s/audio.m3u8", a.ID, tag),
	}
	if err := s.FinishAudio(tb.Context(), a.ID, a.Revision, rendering(keys, 1234)); err != nil {
		tb.Fatalf("FinishAudio(%d, %d): %v", a.ID, a.Revision, err)
	}
	return keys
}

// mustFinishedAudio creates an audio of projectID with externalID,
// finishes it (mustFinish with tag) and returns it as stored, with its keys.
func mustFinishedAudio(tb testing.TB, s Store, projectID int64, externalID, tag string) (*narrator.Audio, map[string]string) {
	tb.Helper()
	keys := mustFinish(tb, s, mustAudio(tb, s, projectID, externalID), tag)
	return mustFindAudio(tb, s, projectID, externalID), keys
}

// rendering returns a rendering of keys (content type → key) lasting
// durationMS, in which each file has 100 bytes per byte of its key, so that
// sizes differ from file to file.
func rendering(keys map[string]string, durationMS int64) narrator.Rendering {
	r := narrator.Rendering{Keys: keys, Bytes: map[string]int64{}, Duration: time.Duration(durationMS) * time.Millisecond}
	for ct, key := range keys {
		r.Bytes[ct] = 100 * int64(len(key))
	}
	return r
}

// mustProjectCount returns a project's AudioCount.
func mustProjectCount(tb testing.TB, s Store, p *narrator.Project) int {
	tb.Helper()
	got, err := s.FindProject(tb.Context(), p.AccountID, p.ID)
	if err != nil {
		tb.Fatalf("FindProject: %v", err)
	}
	return got.AudioCount
}

// hashOf returns the hash a store keeps for an API key.
func hashOf(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// wantCode fails unless err carries the narrator error code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := narrator.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (err %v), want %q", got, err, code)
	}
}

// wantEqual fails unless got and want are deeply equal.
func wantEqual[T any](tb testing.TB, what string, got, want T) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

// wantAudio fails unless got equals want, comparing media and times too.
func wantAudio(tb testing.TB, got, want *narrator.Audio) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("audio:\n got  %s\n want %s", dumpAudio(got), dumpAudio(want))
	}
}

func dumpAudio(a *narrator.Audio) string {
	if a == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%+v", *a)
}

// ids returns the IDs of audios.
func ids(audios []*narrator.Audio) []int64 {
	out := make([]int64, len(audios))
	for i, a := range audios {
		out[i] = a.ID
	}
	return out
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// itoa formats an ID as a reference.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// pagedIDs reads pages 1 to pages of a project's list, perPage a page, and
// returns the IDs they hold in order. It fails if an ID repeats or if the
// last page is not empty, so that the pages read cover the list.
func pagedIDs(tb testing.TB, s Store, projectID int64, since time.Time, perPage, pages int) []int64 {
	tb.Helper()
	var got []int64
	seen := map[int64]int{}
	for page := 1; page <= pages; page++ {
		list, err := s.ListAudios(tb.Context(), projectID, since, page, perPage)
		if err != nil {
			tb.Fatalf("page %d of %d: %v", page, perPage, err)
		}
		if len(list) > perPage {
			tb.Fatalf("page %d of %d holds %d audios", page, perPage, len(list))
		}
		if page == pages && len(list) != 0 {
			tb.Fatalf("page %d of %d holds %v, want it past the end", page, perPage, ids(list))
		}
		for _, a := range list {
			if prev, ok := seen[a.ID]; ok {
				tb.Fatalf("audio %d is on pages %d and %d", a.ID, prev, page)
			}
			seen[a.ID] = page
			got = append(got, a.ID)
		}
	}
	return got
}
