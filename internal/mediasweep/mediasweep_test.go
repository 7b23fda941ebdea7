package mediasweep_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/jobs"
	"github.com/narrator/narrator/internal/localfs"
	"github.com/narrator/narrator/internal/mediaserve"
	"github.com/narrator/narrator/internal/mediasweep"
	"github.com/narrator/narrator/internal/s3/s3test"
	"github.com/narrator/narrator/internal/sqlite"
	"github.com/narrator/narrator/internal/sqlite/sqlitetest"
)

// store is what the test needs of a media store.
type store interface {
	mediasweep.Media
	mediaserve.Opener
	Put(ctx context.Context, key string, r io.Reader) error
}

// mediaStores are the media stores the sweep runs on: each test gets an
// empty one.
var mediaStores = []struct {
	name string
	open func(t *testing.T) store
}{
	{"localfs", func(t *testing.T) store {
		s, err := localfs.New(filepath.Join(t.TempDir(), "media"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"s3", func(t *testing.T) store { return s3test.New(t) }},
}

// TestSweep leaves a signed project's rendering behind as a crash does
// (its files, and no row that names them), and checks that the media
// server refuses them, that a sweep keeps them while a rendering could
// still be writing them and deletes them after, or at once when no
// rendering can be under way, and that it keeps everything owned or not a
// rendering's.
func TestSweep(t *testing.T) {
	t.Parallel()
	for _, ms := range mediaStores {
		t.Run(ms.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			m := ms.open(t)
			st, _ := sqlitetest.Open(t, sqlite.Options{}, jobs.Config{})
			folder := func() string {
				f, err := narrator.NewMediaFolder()
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
			put := func(keys ...string) {
				t.Helper()
				for _, k := range keys {
					if err := m.Put(ctx, k, bytes.NewReader([]byte("bytes of "+k))); err != nil {
						t.Fatal(err)
					}
				}
			}

			acct := &narrator.Account{Name: "Acme"}
			if err := st.CreateAccount(ctx, acct); err != nil {
				t.Fatal(err)
			}
			p := &narrator.Project{AccountID: acct.ID, Title: "Paid", Type: narrator.ProjectTypeAPI,
				Language: "en_US", TitleVoice: "Richard", BodyVoice: "Sally"}
			if err := st.CreateProject(ctx, p); err != nil {
				t.Fatal(err)
			}
			access, err := st.RotateEmbedSecret(ctx, p.ID, narrator.EmbedSecretPrefix+"sweep")
			if err != nil {
				t.Fatal(err)
			}
			access.Mode = narrator.AccessSigned
			if err := st.SetProjectAccess(ctx, &access); err != nil {
				t.Fatal(err)
			}
			newAudio := func(id string) *narrator.Audio {
				a := &narrator.Audio{ProjectID: p.ID, ExternalID: id, Title: "Members only", Body: "Secret text."}
				if _, err := st.CreateAudio(ctx, a); err != nil {
					t.Fatal(err)
				}
				return a
			}

			// A published audio's folder, and a rendering's at work.
			published := folder()
			put(published+"/audio.mp3", published+"/audio.m3u8", published+"/seg00000.ts")
			a := newAudio("published")
			if err := st.FinishAudio(ctx, a.ID, a.Revision, narrator.Rendering{Duration: time.Second, Keys: map[string]string{
				narrator.ContentTypeMP3: published + "/audio.mp3", narrator.ContentTypeM3U8: published + "/audio.m3u8"},
				Bytes: map[string]int64{narrator.ContentTypeMP3: 100, narrator.ContentTypeM3U8: 10}}); err != nil {
				t.Fatal(err)
			}
			working := folder()
			put(working+"/live.m3u8", working+"/seg00000.ts")
			b := newAudio("working")
			if ok, err := st.LeaseSynthesis(ctx, b.ID, b.Revision, "node", time.Now().Add(time.Hour)); err != nil || !ok {
				t.Fatalf("LeaseSynthesis = %v, %v", ok, err)
			}
			if ok, err := st.ReportSynthesis(ctx, b.ID, "node", narrator.SynthesisProgress{Revision: b.Revision, StartedAt: time.Now(),
				RenderProgress: narrator.RenderProgress{UnitsDone: 1, UnitsTotal: 3, LiveKey: working + "/live.m3u8"}}); err != nil || !ok {
				t.Fatalf("ReportSynthesis = %v, %v", ok, err)
			}
			// What a crash leaves: a rendering's files, and no row.
			crashed := folder()
			put(crashed+"/live.m3u8", crashed+"/seg00000.ts", crashed+"/seg00001.ts")
			// Folders that are no rendering's.
			put("voices/abc", "previews/en_US/Sally-1.mp3", "notatoken/a.mp3")

			// The media server refuses the orphan, which may be (and here
			// is) a signed project's, as a missing file.
			srv := httptest.NewServer(http.StripPrefix("/media/", mediaserve.New(m, mediaserve.Options{Access: st})))
			t.Cleanup(srv.Close)
			for _, key := range []string{crashed + "/live.m3u8", crashed + "/seg00000.ts", crashed + "/live.mp3"} {
				res, err := http.Get(srv.URL + "/media/" + key)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusNotFound {
					t.Errorf("GET %s without a token: %d, want 404", key, res.StatusCode)
				}
			}

			sw := mediasweep.New(mediasweep.Config{Media: m, Owners: st})
			sweep := func(cutoff time.Time, want int) {
				t.Helper()
				n, err := sw.Sweep(ctx, cutoff)
				if err != nil || n != want {
					t.Fatalf("Sweep(%v) = %d, %v; want %d", cutoff, n, err, want)
				}
			}
			all := []string{published, working, crashed, "notatoken", "previews", "voices"}
			// While renderings may be under way, files written within the
			// hour are left alone.
			sweep(narrator.MediaOrphanCutoff(time.Now(), false), 0)
			wantFolders(t, m, all)
			// An hour on, the orphan goes, and only it.
			sweep(narrator.MediaOrphanCutoff(time.Now().Add(narrator.OrphanMediaAge+time.Minute), false), 1)
			wantFolders(t, m, slices.DeleteFunc(slices.Clone(all), func(f string) bool { return f == crashed }))
			if _, _, err := m.Open(ctx, crashed+"/live.m3u8"); !errors.Is(err, narrator.ErrBlobNotFound) {
				t.Errorf("orphaned playlist after the sweep: %v, want it gone", err)
			}

			// When no rendering can be under way (a server on SQLite
			// before its jobs start), an orphan goes at once; a rendering
			// whose progress went with the crash is one too.
			again := folder()
			put(again + "/live.m3u8")
			if err := st.ReleaseSynthesisLeases(ctx); err != nil {
				t.Fatal(err)
			}
			sweep(narrator.MediaOrphanCutoff(time.Now(), true), 2)
			wantFolders(t, m, []string{published, "notatoken", "previews", "voices"})
		})
	}
}

// wantFolders fails unless m's top-level folders are want.
func wantFolders(t *testing.T, m store, want []string) {
	t.Helper()
	got, err := m.Folders(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("folders = %q, want %q", got, want)
	}
}
