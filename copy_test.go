package narrator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

func TestCheckCopyTarget(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	later := t0.Add(time.Hour)
	source := func() *narrator.Export {
		return &narrator.Export{
			Accounts: []*narrator.Account{{ID: 1, Name: "Acme", CreatedAt: t0}, {ID: 2, Name: "Other", CreatedAt: t0}},
			APIKeys:  []*narrator.ExportedAPIKey{{APIKey: narrator.APIKey{ID: 1, AccountID: 1, CreatedAt: t0}, Hash: []byte("h1")}},
			Projects: []*narrator.Project{{ID: 1, AccountID: 1, CreatedAt: t0}},
			Users:    []*narrator.User{{ID: 1, AccountID: 1, CreatedAt: t0}},
			Pronunciations: []*narrator.Pronunciation{
				{ID: 1, ProjectID: 1, Phrase: "nginx", CreatedAt: t0},
			},
			Webhooks: []*narrator.Webhook{{ID: 1, ProjectID: 1, CreatedAt: t0}},
		}
	}
	cases := []struct {
		name string
		dst  func() *narrator.Export
		kind string // "" means the copy may go ahead
	}{
		{"empty target", func() *narrator.Export { return &narrator.Export{} }, ""},
		{"earlier copy", source, ""},
		{"earlier copy moved on", func() *narrator.Export {
			e := source()
			e.Accounts = e.Accounts[:1]
			e.Projects = append(e.Projects, &narrator.Project{ID: 7, AccountID: 1, CreatedAt: later})
			e.APIKeys = append(e.APIKeys, &narrator.ExportedAPIKey{APIKey: narrator.APIKey{ID: 9, AccountID: 1, CreatedAt: later}, Hash: []byte("h9")})
			e.Pronunciations[0].Phrase = "NGINX"
			e.LastIDs.Project = 7
			return e
		}, ""},
		{"account not in source", func() *narrator.Export {
			e := source()
			e.Accounts = append(e.Accounts, &narrator.Account{ID: 3, Name: "Stranger", CreatedAt: t0})
			return e
		}, "account 3"},
		{"account renamed", func() *narrator.Export {
			e := source()
			e.Accounts[0].Name = "Acme Inc"
			return e
		}, "account 1"},
		{"account of another time", func() *narrator.Export {
			return &narrator.Export{Accounts: []*narrator.Account{{ID: 1, Name: "Acme", CreatedAt: later}}}
		}, "account 1"},
		{"another key", func() *narrator.Export {
			e := source()
			e.APIKeys[0].Hash = []byte("h2")
			return e
		}, "API key 1"},
		{"another project", func() *narrator.Export {
			e := source()
			e.Projects[0].CreatedAt = later
			return e
		}, "project 1"},
		{"another user", func() *narrator.Export {
			e := source()
			e.Users[0].AccountID = 2
			return e
		}, "user 1"},
		{"another rule", func() *narrator.Export {
			e := source()
			e.Pronunciations[0].CreatedAt = later
			return e
		}, "pronunciation rule 1"},
		{"another webhook", func() *narrator.Export {
			e := source()
			e.Webhooks[0].ProjectID = 2
			return e
		}, "webhook 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := narrator.CheckCopyTarget(source(), c.dst())
			switch {
			case c.kind == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.kind != "" && (narrator.ErrorCode(err) != narrator.ECONFLICT || !strings.Contains(narrator.ErrorMessage(err), c.kind)):
				t.Errorf("error %v, want ECONFLICT naming %s", err, c.kind)
			}
		})
	}
}

func TestCheckCopiedAudio(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	a := &narrator.Audio{ID: 5, ProjectID: 1, State: narrator.StateUnprocessed, CreatedAt: t0}
	cases := []struct {
		name string
		have narrator.Audio
		ok   bool
	}{
		{"same", *a, true},
		{"processed since", narrator.Audio{ID: 5, ProjectID: 1, State: narrator.StateProcessed, Revision: 3, CreatedAt: t0}, true},
		{"deleted since", narrator.Audio{ID: 5, ProjectID: 1, Deleted: true, CreatedAt: t0}, true},
		{"another project", narrator.Audio{ID: 5, ProjectID: 2, CreatedAt: t0}, false},
		{"another time", narrator.Audio{ID: 5, ProjectID: 1, CreatedAt: t0.Add(time.Second)}, false},
	}
	for _, c := range cases {
		err := narrator.CheckCopiedAudio(&c.have, a)
		if c.ok != (err == nil) || (err != nil && narrator.ErrorCode(err) != narrator.ECONFLICT) {
			t.Errorf("%s: CheckCopiedAudio = %v, want ok=%v or ECONFLICT", c.name, err, c.ok)
		}
	}
	if !a.AwaitsSynthesis() || (&narrator.Audio{State: narrator.StateUnprocessed, Deleted: true}).AwaitsSynthesis() ||
		(&narrator.Audio{State: narrator.StateFailed}).AwaitsSynthesis() {
		t.Error("AwaitsSynthesis: want true only for a live unprocessed audio")
	}
}
