package narrator_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

func TestPlanCreate(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	in := narrator.Audio{ID: 7, ProjectID: 3, ExternalID: "e", Title: "T", Body: "B", State: narrator.StateFailed, Error: "x",
		Revision: 9, DurationMS: 5, Deleted: true, Media: []narrator.Media{{ID: 1}}}
	want := narrator.Audio{ProjectID: 3, ExternalID: "e", Title: "T", Body: "B", Metadata: map[string]string{},
		State: narrator.StateUnprocessed, Revision: 1, CreatedAt: now, UpdatedAt: now}
	if diff := cmp.Diff(want, narrator.PlanCreate(&in, now).Next); diff != "" {
		t.Errorf("PlanCreate (-want +got):\n%s", diff)
	}
	in.Metadata = map[string]string{"k": "v"}
	got := narrator.PlanCreate(&in, now).Next
	got.Metadata["k"] = "changed"
	if in.Metadata["k"] != "v" {
		t.Error("PlanCreate shares the input's metadata map")
	}
}

func TestPlanFail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		audio    narrator.Audio
		revision int
		want     bool
	}{
		{"unprocessed", narrator.Audio{State: narrator.StateUnprocessed, Revision: 2}, 2, true},
		{"failed again", narrator.Audio{State: narrator.StateFailed, Revision: 2}, 2, true},
		{"processed", narrator.Audio{State: narrator.StateProcessed, Revision: 2}, 2, false},
		{"other revision", narrator.Audio{State: narrator.StateUnprocessed, Revision: 3}, 2, false},
		{"deleted", narrator.Audio{State: narrator.StateUnprocessed, Revision: 2, Deleted: true}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := narrator.PlanFail(&tc.audio, tc.revision); got != tc.want {
				t.Errorf("PlanFail = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlanFinish(t *testing.T) {
	t.Parallel()
	a := narrator.Audio{ID: 1, Revision: 2, State: narrator.StateUnprocessed, Media: []narrator.Media{
		{ID: 10, ContentType: narrator.ContentTypeMP3, Key: "old/audio.mp3"},
		{ID: 11, ContentType: narrator.ContentTypeM3U8},
	}}
	r := narrator.Rendering{
		Keys:     map[string]string{narrator.ContentTypeMP3: "new/audio.mp3", narrator.ContentTypeM3U8: "new/audio.m3u8"},
		Bytes:    map[string]int64{narrator.ContentTypeMP3: 5000, narrator.ContentTypeM3U8: 120},
		Duration: time.Second,
	}
	got, err := narrator.PlanFinish(&a, 2, r)
	if err != nil {
		t.Fatal(err)
	}
	want := narrator.FinishPlan{
		Media: []narrator.Media{
			{ID: 10, ContentType: narrator.ContentTypeMP3, Key: "new/audio.mp3", Bytes: 5000},
			{ID: 11, ContentType: narrator.ContentTypeM3U8, Key: "new/audio.m3u8", Bytes: 120},
		},
		Effects: narrator.Effects{Queued: -1, MediaBytes: 5120, DeleteMedia: []string{"old/audio.mp3"}, Event: narrator.EventAudioProcessed, PingFeed: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PlanFinish (-want +got):\n%s", diff)
	}
	if a.Media[0].Key != "old/audio.mp3" {
		t.Error("PlanFinish changed the audio's media")
	}
	// An unchanged key is neither set nor replaced.
	mp3 := func(key string, size int64) narrator.Rendering {
		return narrator.Rendering{Keys: map[string]string{narrator.ContentTypeMP3: key}, Bytes: map[string]int64{narrator.ContentTypeMP3: size}}
	}
	got, err = narrator.PlanFinish(&a, 2, mp3("old/audio.mp3", 10))
	if err != nil || len(got.Media) != 0 || len(got.Effects.DeleteMedia) != 0 {
		t.Errorf("same key: %+v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		audio     narrator.Audio
		revision  int
		rendering narrator.Rendering
		code      string
	}{
		"deleted":           {narrator.Audio{Revision: 2, Deleted: true}, 2, narrator.Rendering{}, narrator.ECONFLICT},
		"stale":             {a, 1, narrator.Rendering{}, narrator.ECONFLICT},
		"published":         {narrator.Audio{Revision: 2, State: narrator.StateProcessed}, 2, narrator.Rendering{}, narrator.ECONFLICT},
		"unknown type":      {a, 2, narrator.Rendering{Keys: map[string]string{"wav": "k.wav"}, Bytes: map[string]int64{"wav": 1}}, narrator.EINVALID},
		"empty key":         {a, 2, mp3("", 10), narrator.EINVALID},
		"no size":           {a, 2, narrator.Rendering{Keys: map[string]string{narrator.ContentTypeMP3: "k/audio.mp3"}}, narrator.EINVALID},
		"zero size":         {a, 2, mp3("k/audio.mp3", 0), narrator.EINVALID},
		"negative duration": {a, 2, narrator.Rendering{Duration: -time.Second}, narrator.EINVALID},
	} {
		if _, err := narrator.PlanFinish(&tc.audio, tc.revision, tc.rendering); narrator.ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want code %s", name, err, tc.code)
		}
	}
}

func stored() *narrator.Audio {
	return &narrator.Audio{
		ID: 7, ProjectID: 1, ExternalID: "e", Title: "T", Body: "B.", Author: "A",
		ArticleURL: "https://x.test/a", Metadata: map[string]string{"k": "v"},
		State: narrator.StateProcessed, Revision: 3, DurationMS: 1000,
		Media: []narrator.Media{
			{ID: 1, ContentType: narrator.ContentTypeMP3, Key: "old/audio.mp3"},
			{ID: 2, ContentType: narrator.ContentTypeM3U8, Key: "old/audio.m3u8"},
		},
		CreatedAt: time.Unix(100, 0), UpdatedAt: time.Unix(100, 0),
	}
}

func TestPlanUpdate(t *testing.T) {
	t.Parallel()
	now := time.Unix(200, 0)
	s := func(v string) *string { return &v }
	cases := []struct {
		name                         string
		u                            narrator.AudioUpdate
		changed, resynthesize, newID bool
		wantErr                      string
	}{
		{"nothing", narrator.AudioUpdate{}, false, false, false, ""},
		{"same values", narrator.AudioUpdate{Title: s("T"), Body: s("B.")}, false, false, false, ""},
		{"body", narrator.AudioUpdate{Body: s("New.")}, true, true, false, ""},
		{"author", narrator.AudioUpdate{Author: s("Z")}, true, true, false, ""},
		{"url only", narrator.AudioUpdate{ArticleURL: s("https://x.test/b")}, true, false, false, ""},
		{"metadata only", narrator.AudioUpdate{MetadataSet: true}, true, false, false, ""},
		{"new external id", narrator.AudioUpdate{ExternalID: s("f")}, true, false, true, ""},
		{"external id removed", narrator.AudioUpdate{ExternalID: s("")}, true, false, false, ""},
		{"blank body", narrator.AudioUpdate{Body: s(" ")}, false, false, false, narrator.EINVALID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cur := stored()
			plan, err := narrator.PlanUpdate(cur, c.u, now)
			if c.wantErr != "" {
				if narrator.ErrorCode(err) != c.wantErr {
					t.Fatalf("err = %v, want code %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.Changed != c.changed || plan.Resynthesize != c.resynthesize || plan.ExternalIDChanged != c.newID {
				t.Fatalf("plan = changed %v resynthesize %v new id %v, want %v %v %v",
					plan.Changed, plan.Resynthesize, plan.ExternalIDChanged, c.changed, c.resynthesize, c.newID)
			}
			n := plan.Next
			switch {
			case !c.changed && !n.UpdatedAt.Equal(cur.UpdatedAt):
				t.Errorf("unchanged audio moved UpdatedAt to %v", n.UpdatedAt)
			case c.changed && !n.UpdatedAt.Equal(now):
				t.Errorf("UpdatedAt = %v, want %v", n.UpdatedAt, now)
			}
			if c.resynthesize {
				if n.State != narrator.StateUnprocessed || n.Revision != 4 || n.Error != "" {
					t.Errorf("resynthesized audio = state %s revision %d, want unprocessed 4", n.State, n.Revision)
				}
				if n.Media[0].Key != "old/audio.mp3" {
					t.Errorf("media keys dropped before the new speech is published")
				}
			} else if n.State != narrator.StateProcessed || n.Revision != 3 {
				t.Errorf("audio = state %s revision %d, want processed 3", n.State, n.Revision)
			}
			if cur.Metadata["k"] != "v" || cur.Revision != 3 {
				t.Errorf("PlanUpdate changed the stored audio: %+v", cur)
			}
		})
	}
}
