package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// Creates are committed in groups (sqlstore.Group). SQLite has one writer,
// so concurrent creates wait for it in turn anyway; the one that holds it
// takes every create waiting, and those that join the line while it works,
// up to maxCreateBatch, into one transaction: each in a savepoint of its own, so
// that one create's error fails that create only. The group reads each account's usage once and
// writes it, and its projects' audio counts, once at the end (groupUsage);
// it writes its synthesis jobs after its creates (JobInserter.InsertManyTx).
// A create is answered only once its transaction is committed.
//
// With WAL and synchronous=FULL a commit is written to the WAL and the WAL
// fsynced before CreateAudio returns, so it survives the process being
// killed and a power failure at any moment; the group shares that one
// fsync (docs/architecture.md, "Durability and restarts").

// maxCreateBatch caps the creates of one transaction, which holds the
// writer for its whole length.
const maxCreateBatch = 128

// createCall is one CreateAudio call in a group (Store.creates).
type createCall struct {
	ctx context.Context
	a   *narrator.Audio
	// created and err are the outcome, set by the group.
	created bool
	err     error
}

// writeStmts are the writes' statements, on the writer.
type writeStmts struct {
	audioByExternalID *sql.Stmt
	insertAudio       *sql.Stmt
	insertMedia       *sql.Stmt
	addAudioCount     *sql.Stmt
	accountUsage      *sql.Stmt
	setSynthesisRound *sql.Stmt
	addUsage          *sql.Stmt
	addGroupUsage     *sql.Stmt
	savepoint         *sql.Stmt
	release           *sql.Stmt
	rollbackTo        *sql.Stmt
}

func prepareWrites(p *preparer) writeStmts {
	return writeStmts{
		audioByExternalID: p.stmt(findLiveAudioWithMediaByExternalIDSQL),
		insertAudio:       p.stmt(insertAudioSQL),
		insertMedia:       p.stmt(insertMediaSQL()),
		addAudioCount:     p.stmt(addAudioCountSQL),
		accountUsage:      p.stmt(accountUsageSQL),
		setSynthesisRound: p.stmt(setSynthesisRoundSQL),
		addUsage:          p.stmt(addUsageSQL),
		addGroupUsage:     p.stmt(addGroupUsageSQL),
		savepoint:         p.stmt(`SAVEPOINT create_audio`),
		release:           p.stmt(`RELEASE create_audio`),
		rollbackTo:        p.stmt(`ROLLBACK TO create_audio`),
	}
}

// CreateAudio validates a.
//
// If a.ExternalID is set and a live audio of a.ProjectID has it, CreateAudio
// updates that audio as UpdateAudio would with every article field given
// (title, body, author, article_url and metadata replaced), fills a with the
// stored result and returns created=false.
//
// Otherwise it inserts the audio as narrator.PlanCreate makes it
// (unprocessed, revision 1) with its media, still without keys, enqueues its
// synthesis in the same transaction, fills a in and returns created=true. If
// the enqueuer fails, nothing is stored. It returns ENOTFOUND if the project
// does not exist, and EQUOTA or EQUEUEFULL, storing nothing, if the
// project's account is over its limits (narrator.Limits.CheckSynthesis);
// an update is refused the same way when it needs new speech.
//
// Concurrent calls are committed together (see createCall); each returns
// only after the commit of its own create, with its own error.
func (s *Store) CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error) {
	if err := a.Validate(); err != nil {
		return false, err
	}
	c := &createCall{ctx: ctx, a: a}
	if err := s.creates.Do(c, s.commitCreates); err != nil {
		return false, fmt.Errorf("create audio in project %d: %w", a.ProjectID, err)
	}
	return c.created, c.err
}

// commitCreates runs a group in one transaction and sets every call's
// outcome. A call whose context ended before its turn fails alone. If the
// transaction fails, every call of the group fails with its error. The
// group grows by the calls that join the line before its commit (more).
func (s *Store) commitCreates(group []*createCall, more func() []*createCall) {
	// The group carries other callers' creates: one caller leaving must
	// not cancel them. A group is short.
	ctx := context.WithoutCancel(group[0].ctx)
	got, err := s.createGroup(ctx, &group, more)
	for i, c := range group {
		switch {
		case c.err != nil:
		case err != nil:
			c.created = false
			c.err = fmt.Errorf("create audio in project %d: %w", c.a.ProjectID, err)
		default:
			*c.a = *got[i]
		}
	}
}

// createGroup creates the group's audios in one transaction and returns
// them, nil where a call failed (its err set). Outcomes other than err are
// left to the caller, for after the commit. Calls that join the line while
// it works join the group (more), until the group is full or none waits:
// callers answered by the last commit come back while this one works, and
// would otherwise wait for the next commit, the costlier part of a group.
func (s *Store) createGroup(ctx context.Context, group *[]*createCall, more func() []*createCall) ([]*narrator.Audio, error) {
	all, err := s.prepared()
	if err != nil {
		return nil, err
	}
	st := &all.writes
	if s.jobs != nil {
		if err := s.jobs.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	exec := func(stmt *sql.Stmt) error {
		_, err := tx.StmtContext(ctx, stmt).ExecContext(ctx)
		return err
	}
	var (
		got   []*narrator.Audio
		jobs  []narrator.Job
		head  headMemo
		usage groupUsage
	)
	for i := 0; ; i++ {
		if i == len(*group) {
			if *group = append(*group, more()...); i == len(*group) {
				break
			}
		}
		r := (*group)[i]
		got = append(got, nil)
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("create audio in project %d: %w", r.a.ProjectID, err)
			continue
		}
		// A create that finds a live audio with its external ID updates
		// it, which reads and writes the account's row itself: the group's
		// usage goes there first, outside the update's savepoint.
		var cur *narrator.Audio
		if r.a.ExternalID != "" {
			if cur, err = oneAudio(tx.StmtContext(ctx, st.audioByExternalID).QueryContext(ctx, r.a.ProjectID, r.a.ExternalID)); err != nil {
				r.err = fmt.Errorf("create audio in project %d: %w", r.a.ProjectID, err)
				continue
			}
			if cur != nil {
				if err := usage.flush(ctx, tx, st, s.traceEffect); err != nil {
					return nil, err
				}
			}
		}
		if err := exec(st.savepoint); err != nil {
			return nil, err
		}
		var (
			a       *narrator.Audio
			created []narrator.Job
		)
		if cur != nil {
			a, err = s.updateAudio(ctx, tx, &head, cur, r.a.Replacement())
		} else {
			a, created, err = s.createAudio(ctx, tx, st, &head, &usage, r.a)
		}
		if err != nil {
			r.err = fmt.Errorf("create audio in project %d: %w", r.a.ProjectID, err)
			if err := exec(st.rollbackTo); err != nil {
				return nil, err
			}
		}
		if err := exec(st.release); err != nil {
			return nil, err
		}
		if r.err != nil {
			continue
		}
		got[i], r.created = a, cur == nil
		jobs = append(jobs, created...)
	}
	// The creates' effects, the steps of narrator.Effects in their order
	// for the whole group: the accounts' rows and the projects' (flush),
	// then the jobs. A create raises no webhook event.
	if err := usage.flush(ctx, tx, st, s.traceEffect); err != nil {
		return nil, err
	}
	if len(jobs) > 0 {
		s.traceEffect(narrator.StepJobs)
		if err := s.enqueueMany(ctx, tx, jobs); err != nil {
			return nil, err
		}
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return got, nil
}

// insertAudioSQL inserts an audio as the newest of its project: its number
// (seq) is one above the project's highest, one probe of audios_seq. The
// one writer makes the read and the insert one step.
const insertAudioSQL = `
INSERT INTO audios (project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at, seq)
VALUES (?1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	(SELECT coalesce(max(seq), 0) + 1 FROM audios WHERE project_id = ?1))`

// createAudio inserts a as CreateAudio describes, in tx, and counts its
// effects on its account and project in the group's usage. Its jobs are
// returned for the caller to enqueue, not enqueued. head is the group's
// memo of the synthesis queue's head.
func (s *Store) createAudio(ctx context.Context, tx *sql.Tx, st *writeStmts, head *headMemo, usage *groupUsage, a *narrator.Audio) (*narrator.Audio, []narrator.Job, error) {
	acct, err := usage.account(ctx, tx, st, a.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	if err := s.limits.CheckSynthesis(acct.usage, true); err != nil {
		return nil, nil, err
	}
	if err := s.readHead(ctx, tx, head); err != nil {
		return nil, nil, err
	}
	plan := narrator.PlanCreate(a, s.now())
	got, eff := plan.Next, plan.Effects
	eff.Round = narrator.FairRound(head.round, acct.usage)
	meta, err := encodeMetadata(got.Metadata)
	if err != nil {
		return nil, nil, err
	}
	res, err := tx.StmtContext(ctx, st.insertAudio).ExecContext(ctx, got.ProjectID, nullString(got.ExternalID), got.Title, got.Body,
		got.Author, got.ArticleURL, meta, got.State, got.Error, got.Revision, got.DurationMS,
		micros(got.CreatedAt), micros(got.UpdatedAt))
	if err != nil {
		return nil, nil, formatError(err, "audio")
	}
	if got.ID, err = res.LastInsertId(); err != nil {
		return nil, nil, err
	}
	if got.Media, err = insertMedia(ctx, tx, st, got.ID); err != nil {
		return nil, nil, err
	}
	if err := sqlstore.InsertNewPublications(ctx, sqlTx{tx}, &got); err != nil {
		return nil, nil, err
	}
	acct.add(eff.Round, eff.Queued, eff.MediaBytes)
	usage.audios[got.ProjectID] += eff.AudioCount
	return &got, eff.Jobs(&got), nil
}

// insertMediaSQL inserts an audio's media rows, one of each of
// narrator.MediaTypes in that order, still without keys, in one statement.
func insertMediaSQL() string {
	return `INSERT INTO media (audio_id, content_type) VALUES ` + strings.Repeat(", (?1, ?)", len(narrator.MediaTypes()))[2:]
}

// insertMedia inserts the media rows of a new audio and returns them, in
// the order of narrator.MediaTypes. SQLite numbers the rows of one insert
// one after the other, in their order (media.id is AUTOINCREMENT, and the
// transaction holds the table): the last row's ID is the insert's last ID.
// RETURNING the IDs cost more than a second insert.
func insertMedia(ctx context.Context, tx *sql.Tx, st *writeStmts, audioID int64) ([]narrator.Media, error) {
	types := narrator.MediaTypes()
	args := make([]any, 1+len(types))
	args[0] = audioID
	for i, ct := range types {
		args[1+i] = ct
	}
	res, err := tx.StmtContext(ctx, st.insertMedia).ExecContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("insert media of audio %d: %w", audioID, err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("insert media of audio %d: %w", audioID, err)
	}
	media := make([]narrator.Media, len(types))
	for i, ct := range types {
		media[i] = narrator.Media{ID: last - int64(len(types)-1-i), AudioID: audioID, ContentType: ct}
	}
	return media, nil
}

// groupUsage is what a group's creates have done to their accounts and
// projects, kept in memory and written once, at the end of the group
// (flush), instead of by every create. An account's usage is read once,
// by its first create in the group; the later ones check the limits
// against it as the earlier ones left it, as they would have read it.
type groupUsage struct {
	byProject map[int64]*groupAccount
	// audios counts the audios created in each project.
	audios map[int64]int
}

// groupAccount is one account's usage in a group.
type groupAccount struct {
	id int64
	// usage is as the group's creates so far leave it.
	usage narrator.Usage
	// queued and bytes are the creates' changes not yet written; changed
	// tells whether usage.NextRound is.
	queued  int
	bytes   int64
	changed bool
}

// add counts a create, whose synthesis is queued in round, and which moves
// the account's queued count and media bytes by queued and bytes.
func (a *groupAccount) add(round int64, queued int, bytes int64) {
	a.usage.NextRound = round + 1
	a.usage.Queued += queued
	a.usage.MediaBytes += bytes
	a.queued += queued
	a.bytes += bytes
	a.changed = true
}

// account returns the usage of projectID's account in the group, reading
// it the first time; ENOTFOUND if the project does not exist.
func (g *groupUsage) account(ctx context.Context, tx *sql.Tx, st *writeStmts, projectID int64) (*groupAccount, error) {
	if a := g.byProject[projectID]; a != nil {
		return a, nil
	}
	a := &groupAccount{}
	err := tx.StmtContext(ctx, st.accountUsage).QueryRowContext(ctx, projectID).
		Scan(&a.id, &a.usage.Queued, &a.usage.MediaBytes, &a.usage.NextRound)
	switch {
	case err == sql.ErrNoRows:
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	case err != nil:
		return nil, fmt.Errorf("usage of project %d's account: %w", projectID, err)
	}
	// Another project of the same account shares its usage.
	for _, other := range g.byProject {
		if other.id == a.id {
			a = other
			break
		}
	}
	if g.byProject == nil {
		g.byProject, g.audios = map[int64]*groupAccount{}, map[int64]int{}
	}
	g.byProject[projectID] = a
	return a, nil
}

const addGroupUsageSQL = `
UPDATE accounts SET synthesis_round = ?, queued = queued + ?, media_bytes = media_bytes + ?
WHERE id = ?`

// flush writes the group's changes to its accounts and projects, and
// forgets them: an account is read again by its next create. It takes the
// steps of narrator.Effects that it writes in their order, accounts
// (narrator.StepUsage) before projects (narrator.StepAudioCount), and tells
// trace of each.
func (g *groupUsage) flush(ctx context.Context, tx *sql.Tx, st *writeStmts, trace func(narrator.EffectStep)) error {
	done := map[*groupAccount]bool{}
	for _, a := range g.byProject {
		if !a.changed || done[a] {
			continue
		}
		if len(done) == 0 {
			trace(narrator.StepUsage)
		}
		done[a] = true
		if _, err := tx.StmtContext(ctx, st.addGroupUsage).ExecContext(ctx, a.usage.NextRound, a.queued, a.bytes, a.id); err != nil {
			return fmt.Errorf("count usage of account %d: %w", a.id, err)
		}
	}
	if len(g.audios) > 0 {
		trace(narrator.StepAudioCount)
	}
	for projectID, n := range g.audios {
		if _, err := tx.StmtContext(ctx, st.addAudioCount).ExecContext(ctx, n, projectID); err != nil {
			return fmt.Errorf("count audios of project %d: %w", projectID, err)
		}
	}
	g.byProject, g.audios = nil, nil
	return nil
}
