package sqlite

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/storetest"
)

// The read cache answers only while the database is unchanged: a change
// made by another process (here a second store on the same file, as the
// CLI beside a server is) shows at once, and so does one made by the
// store itself.
func TestReadCacheSeesEveryCommit(t *testing.T) {
	ctx := t.Context()
	path := t.TempDir() + "/narrator.db"
	server := mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))
	cli := mustOpenPath(t, path, withJobs(recorderJobs{&storetest.Recorder{}}))

	acc := &narrator.Account{Name: "Acme"}
	if err := cli.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	p := &narrator.Project{AccountID: acc.ID, Title: "News", Type: narrator.ProjectTypeAPI, Language: "en_US", TitleVoice: "Mark", BodyVoice: "Sally"}
	if err := cli.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	hash := []byte("0123456789abcdef0123456789abcdef")
	key, err := cli.CreateAPIKey(ctx, acc.ID, hash, "nk_")
	if err != nil {
		t.Fatal(err)
	}
	a := &narrator.Audio{ProjectID: p.ID, Title: "T", Body: "Hello there.", ExternalID: "ext", Metadata: map[string]string{"k": "v"}}
	if _, err := server.CreateAudio(ctx, a); err != nil {
		t.Fatal(err)
	}

	for range 2 { // the second answer comes from the cache
		if got, err := server.AuthorizeProject(ctx, hash, p.ID); err != nil || got.ID != p.ID || got.AudioCount != 1 {
			t.Fatalf("AuthorizeProject = %+v, %v", got, err)
		}
		got, err := server.FindAudio(ctx, p.ID, "ext")
		if err != nil || got.ID != a.ID || got.Title != "T" {
			t.Fatalf("FindAudio = %+v, %v", got, err)
		}
		// A caller's changes stay its own.
		got.Title, got.Metadata["k"], got.Media[0].Key = "changed", "changed", "changed"
	}
	if got, _ := server.FindAudio(ctx, p.ID, "ext"); got.Title != "T" || got.Metadata["k"] != "v" || got.Media[0].Key != "" {
		t.Errorf("a caller's change reached the cache: %+v", got)
	}

	for range 2 { // the second page comes from the cache
		list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50)
		if err != nil || len(list) != 1 || list[0].Title != "T" {
			t.Fatalf("ListAudios = %+v, %v", list, err)
		}
		list[0].Title, list[0].Metadata["k"] = "changed", "changed"
	}

	// Another process revokes the key: refused at once.
	if err := cli.RevokeAPIKey(ctx, acc.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := server.AuthorizeProject(ctx, hash, p.ID); narrator.ErrorCode(err) != narrator.EUNAUTHORIZED {
		t.Errorf("AuthorizeProject after another process revoked the key: %v, want EUNAUTHORIZED", err)
	}

	// Another process changes the audio: seen at once.
	title := "New title"
	if _, err := cli.UpdateAudio(ctx, p.ID, "ext", narrator.AudioUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if got, err := server.FindAudio(ctx, p.ID, "ext"); err != nil || got.Title != title {
		t.Errorf("FindAudio after another process's update = %+v, %v; want title %q", got, err, title)
	}
	if list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50); err != nil || len(list) != 1 || list[0].Title != title || list[0].Metadata["k"] != "v" {
		t.Errorf("ListAudios after another process's update = %+v, %v; want title %q and the metadata as stored", list, err, title)
	}

	// The store's own delete: gone at once.
	if _, err := server.DeleteAudio(ctx, p.ID, "ext"); err != nil {
		t.Fatal(err)
	}
	if got, err := server.FindAudio(ctx, p.ID, "ext"); narrator.ErrorCode(err) != narrator.ENOTFOUND {
		t.Errorf("FindAudio after delete = %+v, %v; want ENOTFOUND", got, err)
	}
	if list, err := server.ListAudios(ctx, p.ID, time.Time{}, 1, 50); err != nil || len(list) != 0 {
		t.Errorf("ListAudios after delete = %+v, %v; want none", list, err)
	}
}
