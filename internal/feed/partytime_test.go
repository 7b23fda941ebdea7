package feed_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/feed"
	"github.com/narrator/narrator/internal/proctest"
)

// partytimeVersion is the podcast-partytime npm package scripts/test.sh
// installs.
const partytimeVersion = "5.0.0"

// partytimeFeed is what testdata/partytime.js writes: the parts of
// partytime's reading that the test checks.
type partytimeFeed struct {
	Title      string
	GUID       string
	Medium     string
	ItunesType string
	Owner      struct{ Name, Email string }
	// PC20Support lists the namespace's tags partytime found, by phase.
	PC20Support map[string][]string
	Items       []struct {
		Title, GUID, Link, PubDate string
		Duration                   float64
		Author                     string
		Description, Content       string
		Enclosure                  struct {
			URL    string
			Length int64
			Type   string
		}
		PodcastPeople []struct {
			Name, Role, Group string
		}
		PodcastTranscripts []struct {
			URL, Type, Language, Rel string
		}
		PodcastTxt []struct {
			Value, Purpose string
		}
		PodcastChapters *struct {
			URL, Type string
		}
		ItunesImage string
	}
}

// partytime parses body with podcast-partytime, Podcast Index's own
// Podcasting 2.0 parser, run by node from $NARRATOR_PARTYTIME (by default
// ~/.cache/narrator/partytime, where scripts/test.sh installs it). It
// skips without them (fails under NARRATOR_TEST_FULL=1).
func partytime(t *testing.T, body []byte) *partytimeFeed {
	t.Helper()
	dir := os.Getenv("NARRATOR_PARTYTIME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "narrator", "partytime")
	}
	if _, err := exec.LookPath("node"); err != nil {
		proctest.Missing(t, "node", "apt-get install nodejs")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "podcast-partytime", "package.json")); err != nil {
		proctest.Missing(t, "podcast-partytime in "+dir, "npm install --prefix "+dir+" podcast-partytime@"+partytimeVersion)
	}
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join("testdata", "partytime.js"))
	cmd.Env = append(os.Environ(), "PARTYTIME_DIR="+dir, "PARTYTIME_LOG=error")
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("partytime: %v\n%s", err, stderr.String())
	}
	var f partytimeFeed
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("partytime's output: %v\n%s", err, out)
	}
	return &f
}

// TestPartytime reads a feed with podcast-partytime and checks that it
// finds every tag podcast apps and directories show.
func TestPartytime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.finish(t, &narrator.Audio{Title: "First", Author: "Ann Author", ArticleURL: "https://acme.example/first",
		Body:     "<h2>Start</h2><p>The first paragraph &amp; more.</p>",
		Metadata: map[string]string{narrator.MetadataPublished: "2026-04-01T10:00:00Z", narrator.MetadataImage: "https://acme.example/first.jpg"}})
	b.clock.Advance(time.Hour)
	second := b.finish(t, &narrator.Audio{Title: "Second", Body: "Plain text only.", Metadata: map[string]string{narrator.MetadataImage: "https://acme.example/second.png"}})
	resp, body := get(t, b.url(), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	f := partytime(t, body)
	self := publicBase + narrator.FeedPath(b.feed.Token)
	if f.Title != "Acme Daily" || f.GUID != feed.PodcastGUID(self) || f.Medium != "podcast" || f.ItunesType != "episodic" {
		t.Errorf("channel: title %q guid %q medium %q type %q", f.Title, f.GUID, f.Medium, f.ItunesType)
	}
	if f.Owner.Name != "Acme Audio" || f.Owner.Email != "podcasts@acme.example" {
		t.Errorf("owner %+v", f.Owner)
	}
	found := map[string]bool{}
	for _, tags := range f.PC20Support {
		for _, tag := range tags {
			found[tag] = true
		}
	}
	for _, tag := range []string{"chapters", "guid", "medium", "person", "transcript", "txt"} {
		if !found[tag] {
			t.Errorf("partytime finds no podcast:%s support (pc20support %v)", tag, f.PC20Support)
		}
	}
	if len(f.Items) != 2 {
		t.Fatalf("%d items, want 2", len(f.Items))
	}
	for i, a := range []*narrator.Audio{second, first} {
		it := f.Items[i]
		mp3, _ := b.mustAudio(t, a).MediaOf(narrator.ContentTypeMP3)
		_, vttKey := narrator.TranscriptKeys(mp3.Key)
		if it.GUID != feed.GUID(a) || it.Title != a.Title || it.Link != a.ArticleURL || it.Duration != 61 {
			t.Errorf("item %d: guid %q title %q link %q duration %v", i, it.GUID, it.Title, it.Link, it.Duration)
		}
		if it.Enclosure.URL != mediaBase+mp3.Key || it.Enclosure.Length != mp3.Bytes || it.Enclosure.Type != "audio/mpeg" {
			t.Errorf("item %d: enclosure %+v", i, it.Enclosure)
		}
		wantTr := []struct{ URL, Type, Language, Rel string }{
			{mediaBase + vttKey, "text/vtt", "en-US", "captions"},
			{mediaBase + narrator.PodcastTranscriptKey(mp3.Key), "application/json", "en-US", ""},
		}
		if diff := cmp.Diff(wantTr, it.PodcastTranscripts); diff != "" {
			t.Errorf("item %d: transcripts (-want +got):\n%s", i, diff)
		}
		wantCh := &struct{ URL, Type string }{mediaBase + narrator.ChaptersKey(mp3.Key), "application/json+chapters"}
		if diff := cmp.Diff(wantCh, it.PodcastChapters); diff != "" {
			t.Errorf("item %d: chapters (-want +got):\n%s", i, diff)
		}
		if it.ItunesImage != a.Metadata[narrator.MetadataImage] {
			t.Errorf("item %d: itunes:image %q, want %q", i, it.ItunesImage, a.Metadata[narrator.MetadataImage])
		}
		if len(it.PodcastTxt) != 1 || it.PodcastTxt[0].Purpose != "ai-content" || it.PodcastTxt[0].Value != feed.AIContent {
			t.Errorf("item %d: podcast:txt %+v", i, it.PodcastTxt)
		}
	}
	old, newer := f.Items[1], f.Items[0]
	if old.PubDate != "2026-04-01T10:00:00.000Z" || newer.PubDate != b.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("pubDates %s and %s: want the article's date, else the audio's creation", old.PubDate, newer.PubDate)
	}
	// partytime names roles and groups as the taxonomy spells them.
	if old.Author != "Ann Author" || len(old.PodcastPeople) != 1 || old.PodcastPeople[0].Name != "Ann Author" ||
		!strings.EqualFold(old.PodcastPeople[0].Role, "author") || !strings.EqualFold(old.PodcastPeople[0].Group, "writing") {
		t.Errorf("author %q, people %+v", old.Author, old.PodcastPeople)
	}
	for _, s := range []string{old.Description, old.Content} {
		if !strings.Contains(s, `<a href="https://acme.example/first">`) {
			t.Errorf("description or content without a link to the article: %q", s)
		}
	}
	// partytime decodes the HTML's entities too.
	if !strings.Contains(old.Content, "<p>Start</p><p>The first paragraph & more.</p>") {
		t.Errorf("content %q", old.Content)
	}
}

// mustAudio reads a back from the store, with its media.
func (b *testBundle) mustAudio(t *testing.T, a *narrator.Audio) *narrator.Audio {
	t.Helper()
	got, err := b.store.FindAudio(t.Context(), b.project.ID, strconv.FormatInt(a.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	return got
}
