package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// notPublicSQL is a condition on an audio row named audios that holds
// while the audio is not public (narrator.Publication.Public) at the
// instant of its placeholder: a draft, or scheduled for later. An audio
// without a publication row is published. Queries of what anonymous
// listeners see (the podcast feed) add "AND NOT " + notPublicSQL.
const notPublicSQL = `EXISTS (SELECT 1 FROM audio_publications p WHERE p.audio_id = audios.id
	AND (p.state = 'draft' OR (p.state = 'scheduled' AND p.publish_at > ?)))`

const findPublicationSQL = `SELECT state, publish_at, updated_at FROM audio_publications WHERE audio_id = ?`

// AudioPublication returns the publication of the audio: its row, or
// narrator.DefaultPublication when its publisher never decided. It does
// not check that the audio exists: callers have found it already.
func (s *Store) AudioPublication(ctx context.Context, audioID int64) (narrator.Publication, error) {
	return ReadV(ctx, s, fmt.Sprintf("audio publication %d", audioID), func(tx Tx) (narrator.Publication, error) {
		p, err := findPublication(ctx, tx, audioID)
		if err != nil {
			return narrator.Publication{}, fmt.Errorf("audio publication %d: %w", audioID, err)
		}
		return p, nil
	})
}

func findPublication(ctx context.Context, tx Tx, audioID int64) (narrator.Publication, error) {
	p := narrator.Publication{AudioID: audioID}
	var at *time.Time
	err := tx.QueryRow(ctx, findPublicationSQL, audioID).Scan(&p.State, &at, &p.UpdatedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return narrator.DefaultPublication(audioID), nil
	case err != nil:
		return p, err
	}
	if at != nil {
		p.PublishAt = *at
	}
	return p, nil
}

const liveAudioSQL = `SELECT project_id FROM audios WHERE id = ? AND deleted_at IS NULL`

const upsertPublicationSQL = `
INSERT INTO audio_publications (audio_id, project_id, state, publish_at, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (audio_id) DO UPDATE SET state = excluded.state, publish_at = excluded.publish_at, updated_at = excluded.updated_at`

// SetPublication stores the publisher's decision p about audio p.AudioID
// and returns it as stored, with UpdatedAt; the feed's hub hears of it
// (narrator.PublicationPings). It returns EINVALID if p is
// not valid and ENOTFOUND unless the audio is live.
func (s *Store) SetPublication(ctx context.Context, p narrator.Publication) (narrator.Publication, error) {
	if err := p.Validate(); err != nil {
		return p, err
	}
	return WriteV(ctx, s, fmt.Sprintf("set publication of audio %d", p.AudioID), func(tx Tx) (narrator.Publication, error) {
		var projectID int64
		if err := tx.QueryRow(ctx, liveAudioSQL+s.db.ForUpdate(), p.AudioID).Scan(&projectID); errors.Is(err, sql.ErrNoRows) {
			return p, narrator.Errorf(narrator.ENOTFOUND, "audio %d not found", p.AudioID)
		} else if err != nil {
			return p, fmt.Errorf("set publication of audio %d: %w", p.AudioID, err)
		}
		p.UpdatedAt = s.now()
		if _, err := tx.Exec(ctx, upsertPublicationSQL, p.AudioID, projectID, p.State, NullTime(p.PublishAt), p.UpdatedAt); err != nil {
			return p, fmt.Errorf("set publication of audio %d: %w", p.AudioID, err)
		}
		for _, ping := range narrator.PublicationPings(projectID, p, p.UpdatedAt) {
			if err := s.PingFeed(ctx, tx, ping); err != nil {
				return p, fmt.Errorf("set publication of audio %d: %w", p.AudioID, err)
			}
		}
		return p, nil
	})
}

// insertNewPublicationsSQL inserts the publications of new audios
// (NewPublications), given the list of their projects' IDs and the list of
// theirs (DB.InList), so that its text is the same for every group. The
// uncorrelated EXISTS is a gate read first, on project_access's key: when
// none of the projects makes new audios wait, as is common, the audios are
// not read at all, whatever plan PostgreSQL has cached for the join (on a
// new database, one that read every audio).
const insertNewPublicationsSQL = `
INSERT INTO audio_publications (audio_id, project_id, state, publish_at, updated_at)
SELECT a.id, a.project_id, p.new_audio_state, NULL, a.created_at
FROM audios a JOIN project_access p ON p.project_id = a.project_id AND p.new_audio_state <> 'published'
WHERE EXISTS (SELECT 1 FROM project_access WHERE project_id %[1]s AND new_audio_state <> 'published')
	AND a.id %[1]s`

// InsertNewPublications gives the audios, just inserted in tx, the
// publication of their projects' new audios
// (narrator.ProjectAccess.NewPublication), in one statement: a draft row
// for each audio of a project that makes new audios wait, none otherwise.
// Both stores' creates call it, so that no moment passes in which a new
// audio of such a project is public.
func InsertNewPublications(ctx context.Context, db DB, tx Tx, audios ...*narrator.Audio) error {
	if len(audios) == 0 {
		return nil
	}
	query, args := NewPublications(db, audios)
	if _, err := tx.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("publications of %d new audios: %w", len(audios), err)
	}
	return nil
}

// NewPublications returns the statement of InsertNewPublications for the
// audios, at least one, and its arguments, for a store that sends it with
// other statements at once.
func NewPublications(db DB, audios []*narrator.Audio) (query string, args []any) {
	var projects []int64
	ids := make([]int64, len(audios))
	for i, a := range audios {
		if !slices.Contains(projects, a.ProjectID) {
			projects = append(projects, a.ProjectID)
		}
		ids[i] = a.ID
	}
	return fmt.Sprintf(insertNewPublicationsSQL, db.InList()), []any{projects, ids}
}

const publicationChangedSQL = `
SELECT (SELECT updated_at FROM audio_publications WHERE project_id = ? ORDER BY updated_at DESC LIMIT 1),
	(SELECT publish_at FROM audio_publications WHERE project_id = ? AND publish_at <= ? ORDER BY publish_at DESC LIMIT 1)`

// publicationChangedAt returns, in tx, the latest change of a publication
// of the project's audios or the latest schedule come due by now, each the
// first entry of an index; zero if none. A podcast feed changes then too:
// it counts them in its Last-Modified.
func publicationChangedAt(ctx context.Context, tx Tx, projectID int64, now time.Time) (time.Time, error) {
	var decided, due *time.Time
	if err := tx.QueryRow(ctx, publicationChangedSQL, projectID, projectID, now).Scan(&decided, &due); err != nil {
		return time.Time{}, fmt.Errorf("publication changes of project %d: %w", projectID, err)
	}
	var last time.Time
	for _, t := range []*time.Time{decided, due} {
		if t != nil && t.After(last) {
			last = *t
		}
	}
	return last, nil
}

const findAccessSQL = `SELECT mode, allowed_origins, signing_secret, new_audio_state, download_button, updated_at FROM project_access WHERE project_id = ?`

// ProjectAccess returns the project's access settings, or
// narrator.DefaultAccess when they were never changed. It does not check
// that the project exists: a missing project has the default settings and
// no audio.
func (s *Store) ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error) {
	return ReadV(ctx, s, fmt.Sprintf("access of project %d", projectID), func(tx Tx) (narrator.ProjectAccess, error) {
		a, err := findAccess(ctx, tx, projectID)
		if err != nil {
			return a, fmt.Errorf("access of project %d: %w", projectID, err)
		}
		return a, nil
	})
}

func findAccess(ctx context.Context, tx Tx, projectID int64) (narrator.ProjectAccess, error) {
	a := narrator.ProjectAccess{ProjectID: projectID}
	var origins, newState string
	err := tx.QueryRow(ctx, findAccessSQL, projectID).Scan(&a.Mode, &origins, &a.SigningSecret, &newState, &a.DownloadButton, &a.UpdatedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return narrator.DefaultAccess(projectID), nil
	case err != nil:
		return a, err
	}
	if origins != "" {
		a.AllowedOrigins = strings.Fields(origins)
	}
	a.DraftNewAudios = newState == narrator.PublicationDraft
	return a, nil
}

const upsertAccessSQL = `
INSERT INTO project_access (project_id, mode, allowed_origins, signing_secret, new_audio_state, download_button, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (project_id) DO UPDATE SET mode = excluded.mode, allowed_origins = excluded.allowed_origins,
	signing_secret = excluded.signing_secret, new_audio_state = excluded.new_audio_state,
	download_button = excluded.download_button, updated_at = excluded.updated_at`

// SetProjectAccess stores the project's access settings, as a.Validate
// makes them canonical, and fills in UpdatedAt. The signing secret is
// kept: only RotateEmbedSecret changes it. It returns EINVALID if a is
// not valid (a signed project needs a secret) and ENOTFOUND if the
// project does not exist.
func (s *Store) SetProjectAccess(ctx context.Context, a *narrator.ProjectAccess) error {
	return s.writeAccess(ctx, a.ProjectID, func(cur *narrator.ProjectAccess) error {
		secret := cur.SigningSecret
		*cur = *a
		cur.SigningSecret = secret
		return cur.Validate()
	}, a)
}

// RotateEmbedSecret replaces the project's signing secret with secret
// (narrator.NewEmbedSecret) and returns the settings: tokens signed with
// the old secret are refused from then on. It returns ENOTFOUND if the
// project does not exist.
func (s *Store) RotateEmbedSecret(ctx context.Context, projectID int64, secret string) (narrator.ProjectAccess, error) {
	var a narrator.ProjectAccess
	if !strings.HasPrefix(secret, narrator.EmbedSecretPrefix) {
		return a, narrator.Errorf(narrator.EINVALID, "a signing secret starts with %s", narrator.EmbedSecretPrefix)
	}
	err := s.writeAccess(ctx, projectID, func(cur *narrator.ProjectAccess) error {
		cur.SigningSecret = secret
		return nil
	}, &a)
	return a, err
}

// writeAccess changes the project's settings with change, in one
// transaction that holds the project's row, and stores the result in out;
// the feed's hub hears of a change the feed shows (narrator.AccessChangesFeed).
func (s *Store) writeAccess(ctx context.Context, projectID int64, change func(*narrator.ProjectAccess) error, out *narrator.ProjectAccess) error {
	cur, err := WriteV(ctx, s, fmt.Sprintf("set access of project %d", projectID), func(tx Tx) (narrator.ProjectAccess, error) {
		var id int64
		if err := tx.QueryRow(ctx, lockProjectSQL+s.db.ForUpdate(), projectID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return narrator.ProjectAccess{}, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
		} else if err != nil {
			return narrator.ProjectAccess{}, fmt.Errorf("set access of project %d: %w", projectID, err)
		}
		cur, err := findAccess(ctx, tx, projectID)
		if err != nil {
			return narrator.ProjectAccess{}, fmt.Errorf("set access of project %d: %w", projectID, err)
		}
		before := cur
		if err := change(&cur); err != nil {
			return narrator.ProjectAccess{}, err
		}
		cur.ProjectID, cur.UpdatedAt = projectID, s.now()
		newState := narrator.PublicationPublished
		if cur.DraftNewAudios {
			newState = narrator.PublicationDraft
		}
		if _, err := tx.Exec(ctx, upsertAccessSQL, projectID, cur.Mode, strings.Join(cur.AllowedOrigins, " "), cur.SigningSecret,
			newState, cur.DownloadButton, cur.UpdatedAt); err != nil {
			return narrator.ProjectAccess{}, fmt.Errorf("set access of project %d: %w", projectID, err)
		}
		if narrator.AccessChangesFeed(before, cur) {
			if err := s.PingFeed(ctx, tx, narrator.FeedPing(projectID, cur.UpdatedAt)); err != nil {
				return narrator.ProjectAccess{}, fmt.Errorf("set access of project %d: %w", projectID, err)
			}
		}
		return cur, nil
	})
	if err != nil {
		return err
	}
	*out = cur
	return nil
}

// mediaProjectSQL finds the project of a folder of media: by its MP3's key
// once published, or by its live playlist's while the audio is made.
const mediaProjectSQL = `
SELECT a.project_id FROM media m JOIN audios a ON a.id = m.audio_id WHERE m.key = ?
UNION ALL
SELECT a.project_id FROM synthesis_progress sp JOIN audios a ON a.id = sp.audio_id WHERE sp.live_key = ?`

// MediaAccess returns the access settings of the project whose audio's
// media are in folder (narrator.MediaSubject). It returns ENOTFOUND when
// no audio owns the folder, by its media or its progress: a folder
// deleted or replaced, whose files are going or gone, or one a rendering
// left behind when its process died, which may be a signed project's
// and is served to no one.
func (s *Store) MediaAccess(ctx context.Context, folder string) (narrator.ProjectAccess, error) {
	return ReadV(ctx, s, fmt.Sprintf("media access of %s", folder), func(tx Tx) (narrator.ProjectAccess, error) {
		var projectID int64
		err := tx.QueryRow(ctx, mediaProjectSQL+" LIMIT 1", folder+"/"+narrator.MediaMP3Name, folder+"/"+narrator.LivePlaylistName).Scan(&projectID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return narrator.ProjectAccess{}, narrator.Errorf(narrator.ENOTFOUND, "no audio owns media folder %s", folder)
		case err != nil:
			return narrator.ProjectAccess{}, fmt.Errorf("media access of %s: %w", folder, err)
		}
		a, err := findAccess(ctx, tx, projectID)
		if err != nil {
			return a, fmt.Errorf("media access of %s: %w", folder, err)
		}
		return a, nil
	})
}

const exportPublicationsSQL = `
SELECT audio_id, state, publish_at, updated_at FROM audio_publications WHERE audio_id > ? ORDER BY audio_id LIMIT ?`

// ExportPublications returns up to limit stored publications of audios
// with IDs above afterID, by audio ID, for copy-data; audios without one
// are published.
func (s *Store) ExportPublications(ctx context.Context, afterID int64, limit int) ([]narrator.Publication, error) {
	return ReadV(ctx, s, "export publications", func(tx Tx) ([]narrator.Publication, error) {
		rows, err := tx.Query(ctx, exportPublicationsSQL, afterID, limit)
		if err != nil {
			return nil, fmt.Errorf("export publications: %w", err)
		}
		defer rows.Close()
		var out []narrator.Publication
		for rows.Next() {
			var p narrator.Publication
			var at *time.Time
			if err := rows.Scan(&p.AudioID, &p.State, &at, &p.UpdatedAt); err != nil {
				return nil, fmt.Errorf("export publications: %w", err)
			}
			if at != nil {
				p.PublishAt = *at
			}
			out = append(out, p)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("export publications: %w", err)
		}
		return out, nil
	})
}
