package narrator_test

import (
	"testing"
	"time"

	"github.com/narrator/narrator"
)

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
		name                    string
		u                       narrator.AudioUpdate
		changed, respeak, newID bool
		wantErr                 string
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
			if plan.Changed != c.changed || plan.Respeak != c.respeak || plan.ExternalIDChanged != c.newID {
				t.Fatalf("plan = changed %v respeak %v new id %v, want %v %v %v",
					plan.Changed, plan.Respeak, plan.ExternalIDChanged, c.changed, c.respeak, c.newID)
			}
			n := plan.Next
			switch {
			case !c.changed && !n.UpdatedAt.Equal(cur.UpdatedAt):
				t.Errorf("unchanged audio moved UpdatedAt to %v", n.UpdatedAt)
			case c.changed && !n.UpdatedAt.Equal(now):
				t.Errorf("UpdatedAt = %v, want %v", n.UpdatedAt, now)
			}
			if c.respeak {
				if n.State != narrator.StateUnprocessed || n.Revision != 4 || n.Error != "" {
					t.Errorf("respoken audio = state %s revision %d, want unprocessed 4", n.State, n.Revision)
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

func TestPlanPublish(t *testing.T) {
	t.Parallel()
	keys := map[string]string{narrator.ContentTypeMP3: "new/audio.mp3", narrator.ContentTypeM3U8: "new/audio.m3u8"}
	pending := func() *narrator.Audio {
		a := stored()
		a.Resynthesize(time.Unix(300, 0))
		return a
	}
	replaced, err := narrator.PlanPublish(pending(), 4, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(replaced) != 2 || replaced[0] != "old/audio.mp3" || replaced[1] != "old/audio.m3u8" {
		t.Errorf("replaced = %v, want the two old keys", replaced)
	}
	deleted := pending()
	deleted.Deleted = true
	for name, c := range map[string]struct {
		a        *narrator.Audio
		revision int
		keys     map[string]string
		code     string
	}{
		"stale revision":    {pending(), 3, keys, narrator.ECONFLICT},
		"already published": {stored(), 3, keys, narrator.ECONFLICT},
		"deleted":           {deleted, 4, keys, narrator.ECONFLICT},
		"unknown type":      {pending(), 4, map[string]string{"ogg": "x/a.ogg"}, narrator.EINVALID},
		"empty key":         {pending(), 4, map[string]string{narrator.ContentTypeMP3: ""}, narrator.EINVALID},
	} {
		if _, err := narrator.PlanPublish(c.a, c.revision, c.keys); narrator.ErrorCode(err) != c.code {
			t.Errorf("%s: err = %v, want code %s", name, err, c.code)
		}
	}
}
