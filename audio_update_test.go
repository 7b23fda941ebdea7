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
	if diff := cmp.Diff(want, narrator.PlanCreate(&in, now)); diff != "" {
		t.Errorf("PlanCreate (-want +got):\n%s", diff)
	}
	in.Metadata = map[string]string{"k": "v"}
	got := narrator.PlanCreate(&in, now)
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

func TestPlanPublish(t *testing.T) {
	t.Parallel()
	a := narrator.Audio{ID: 1, Revision: 2, State: narrator.StateUnprocessed, Media: []narrator.Media{
		{ID: 10, ContentType: narrator.ContentTypeMP3, Key: "old/audio.mp3"},
		{ID: 11, ContentType: narrator.ContentTypeM3U8},
	}}
	got, err := narrator.PlanPublish(&a, 2, map[string]string{narrator.ContentTypeMP3: "new/audio.mp3", narrator.ContentTypeM3U8: "new/audio.m3u8"})
	if err != nil {
		t.Fatal(err)
	}
	want := narrator.PublishPlan{
		Media: []narrator.Media{
			{ID: 10, ContentType: narrator.ContentTypeMP3, Key: "new/audio.mp3"},
			{ID: 11, ContentType: narrator.ContentTypeM3U8, Key: "new/audio.m3u8"},
		},
		Replaced: []string{"old/audio.mp3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PlanPublish (-want +got):\n%s", diff)
	}
	if a.Media[0].Key != "old/audio.mp3" {
		t.Error("PlanPublish changed the audio's media")
	}
	// An unchanged key is neither set nor replaced.
	got, err = narrator.PlanPublish(&a, 2, map[string]string{narrator.ContentTypeMP3: "old/audio.mp3"})
	if err != nil || len(got.Media) != 0 || len(got.Replaced) != 0 {
		t.Errorf("same key: %+v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		audio    narrator.Audio
		revision int
		keys     map[string]string
		code     string
	}{
		"deleted":      {narrator.Audio{Revision: 2, Deleted: true}, 2, nil, narrator.ECONFLICT},
		"stale":        {a, 1, nil, narrator.ECONFLICT},
		"published":    {narrator.Audio{Revision: 2, State: narrator.StateProcessed}, 2, nil, narrator.ECONFLICT},
		"unknown type": {a, 2, map[string]string{"wav": "k.wav"}, narrator.EINVALID},
		"empty key":    {a, 2, map[string]string{narrator.ContentTypeMP3: ""}, narrator.EINVALID},
	} {
		if _, err := narrator.PlanPublish(&tc.audio, tc.revision, tc.keys); narrator.ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want code %s", name, err, tc.code)
		}
	}
}
