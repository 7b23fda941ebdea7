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
// up to sqlstore.MaxCreateGroup, into one transaction: each in a savepoint of its own, so
// that one create's error fails that create only. The group reads each account's usage once and
// writes it, and its projects' audio counts, once at the end (groupUsage);
// it writes its synthesis jobs after its creates (JobInserter.InsertManyTx).
// A create is answered only once its transaction is committed.
//
// With WAL and synchronous=FULL a commit is written to the WAL and the WAL
// fsynced before CreateAudio returns, so it survives the process being
// killed and a power failure at any moment; the group shares that one
// fsync (docs/architecture.md, "Durability and restarts").

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
// Concurrent calls are committed together (sqlstore.Creates); each returns
// only after the commit of its own create, with its own error. With
// Options.NoGroupCommit, each runs alone (sqlstore.CreateAudio).
func (s *Store) CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error) {
	if s.alone {
		return sqlstore.CreateAudio(ctx, s.Store, a)
	}
	c, err := s.creates.Create(ctx, a, nil, s.commitCreates)
	if err != nil {
		return false, err
	}
	return c.Created, c.Err
}

// CreateAudioWithKey is CreateAudio once AuthorizeProject has found the
// API key with this hash to be a live key of a.ProjectID's account; it
// returns AuthorizeProject's error otherwise, storing nothing.
func (s *Store) CreateAudioWithKey(ctx context.Context, hash []byte, a *narrator.Audio) (created bool, err error) {
	if _, err := s.AuthorizeProject(ctx, hash, a.ProjectID); err != nil {
		return false, err
	}
	return s.CreateAudio(ctx, a)
}

// commitCreates runs a group in one transaction and sets every call's
// outcome. A call whose context ended before its turn fails alone. If the
// transaction fails, every call of the group fails with its error. The
// group grows by the calls that join the line before its commit (more).
func (s *Store) commitCreates(group []*sqlstore.CreateCall, more func() []*sqlstore.CreateCall) {
	// The group carries other callers' creates: one caller leaving must
	// not cancel them. A group is short.
	ctx := context.WithoutCancel(group[0].Ctx)
	got, err := s.createGroup(ctx, &group, more)
	for i, c := range group {
		switch {
		case c.Err != nil:
		case err != nil:
			c.Created = false
			c.Fail(err)
		default:
			*c.Audio = *got[i]
		}
	}
}

// createGroup creates the group's audios in one transaction and returns
// them, nil where a call failed (its err set). Outcomes other than err are
// left to the caller, for after the commit. Calls that join the line while
// it works join the group (more), until the group is full or none waits:
// callers answered by the last commit come back while this one works, and
// would otherwise wait for the next commit, the costlier part of a group.
func (s *Store) createGroup(ctx context.Context, group *[]*sqlstore.CreateCall, more func() []*sqlstore.CreateCall) ([]*narrator.Audio, error) {
	all, err := s.prepared()
	if err != nil {
		return nil, err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	w := &groupWrite{ctx: ctx, tx: tx, st: &all.writes}
	var got []*narrator.Audio
	for i := 0; ; i++ {
		if i == len(*group) {
			if *group = append(*group, more()...); i == len(*group) {
				break
			}
		}
		a, err := s.groupCreate(w, (*group)[i])
		if err != nil {
			return nil, err
		}
		got = append(got, a)
	}
	// The creates' effects, the steps of narrator.Effects in their order
	// for the whole group: the accounts' rows and the projects' (flush),
	// then the jobs. A create raises no webhook event.
	if err := w.usage.flush(ctx, tx, w.st, s.traceEffect); err != nil {
		return nil, err
	}
	if len(w.jobs) > 0 {
		s.traceEffect(narrator.StepJobs)
		if err := s.enqueueMany(ctx, tx, w.jobs); err != nil {
			return nil, err
		}
	}
	if err := commit(tx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return got, nil
}

// groupWrite is a group's transaction and what its creates have done so
// far: the queue's head as it read it, the usage they counted, and the
// jobs to enqueue at the end.
type groupWrite struct {
	ctx   context.Context
	tx    *sql.Tx
	st    *writeStmts
	head  headMemo
	usage groupUsage
	jobs  []narrator.Job
}

// exec runs stmt, without arguments, in the group's transaction.
func (w *groupWrite) exec(stmt *sql.Stmt) error {
	_, err := w.tx.StmtContext(w.ctx, stmt).ExecContext(w.ctx)
	return err
}

// groupCreate runs the create r in the group's transaction, in a savepoint
// of its own, and returns its audio; nil, with r's error set, if r
// failed. The error it returns fails the whole group.
func (s *Store) groupCreate(w *groupWrite, r *sqlstore.CreateCall) (*narrator.Audio, error) {
	if err := r.Ctx.Err(); err != nil {
		r.Fail(err)
		return nil, nil
	}
	cur, err := w.liveAudio(r.Audio)
	if err != nil {
		r.Fail(err)
		return nil, nil
	}
	if cur != nil {
		// The update reads and writes the account's row itself: the
		// group's usage goes there first, outside the update's savepoint.
		if err := w.usage.flush(w.ctx, w.tx, w.st, s.traceEffect); err != nil {
			return nil, err
		}
	}
	if err := w.exec(w.st.savepoint); err != nil {
		return nil, err
	}
	var (
		a       *narrator.Audio
		created []narrator.Job
	)
	if cur != nil {
		a, err = s.updateAudio(w.ctx, w.tx, &w.head, cur, r.Audio.Replacement())
	} else {
		a, created, err = s.createAudio(w.ctx, w.tx, w.st, &w.head, &w.usage, r.Audio)
	}
	if err != nil {
		r.Fail(err)
		if err := w.exec(w.st.rollbackTo); err != nil {
			return nil, err
		}
	}
	if err := w.exec(w.st.release); err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, nil
	}
	r.Created = cur == nil
	w.jobs = append(w.jobs, created...)
	return a, nil
}

// liveAudio returns the live audio that a, to be created in the group,
// updates: the one that holds a's external ID, if a has one.
func (w *groupWrite) liveAudio(a *narrator.Audio) (*narrator.Audio, error) {
	if a.ExternalID == "" {
		return nil, nil
	}
	return oneAudio(w.tx.StmtContext(w.ctx, w.st.audioByExternalID).QueryContext(w.ctx, a.ProjectID, a.ExternalID))
}

// insertAudioSQL inserts an audio as the newest of its project: its number
// (seq) is one above the project's highest, one probe of audios_seq. The
// one writer makes the read and the insert one step.
const insertAudioSQL = `
INSERT INTO audios (` + sqlstore.AudioInsertColumns + `)
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
	if err := s.readHead(ctx, tx, head); err != nil {
		return nil, nil, err
	}
	got, eff, err := acct.PlanCreate(s.limits, head.round, a, s.now())
	if err != nil {
		return nil, nil, err
	}
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
	if err := sqlstore.InsertNewPublications(ctx, dialect{s}, sqlTx{tx}, &got); err != nil {
		return nil, nil, err
	}
	acct.Count(eff)
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
	byProject map[int64]*sqlstore.GroupAccount
	// audios counts the audios created in each project.
	audios map[int64]int
}

// account returns the usage of projectID's account in the group, reading
// it the first time; ENOTFOUND if the project does not exist.
func (g *groupUsage) account(ctx context.Context, tx *sql.Tx, st *writeStmts, projectID int64) (*sqlstore.GroupAccount, error) {
	if a := g.byProject[projectID]; a != nil {
		return a, nil
	}
	a := &sqlstore.GroupAccount{}
	err := tx.StmtContext(ctx, st.accountUsage).QueryRowContext(ctx, projectID).
		Scan(&a.ID, &a.Usage.Queued, &a.Usage.MediaBytes, &a.Usage.NextRound)
	switch {
	case err == sql.ErrNoRows:
		return nil, narrator.Errorf(narrator.ENOTFOUND, "project %d not found", projectID)
	case err != nil:
		return nil, fmt.Errorf("usage of project %d's account: %w", projectID, err)
	}
	// Another project of the same account shares its usage.
	for _, other := range g.byProject {
		if other.ID == a.ID {
			a = other
			break
		}
	}
	if g.byProject == nil {
		g.byProject, g.audios = map[int64]*sqlstore.GroupAccount{}, map[int64]int{}
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
	done := map[*sqlstore.GroupAccount]bool{}
	for _, a := range g.byProject {
		if !a.Changed || done[a] {
			continue
		}
		if len(done) == 0 {
			trace(narrator.StepUsage)
		}
		done[a] = true
		if _, err := tx.StmtContext(ctx, st.addGroupUsage).ExecContext(ctx, a.Usage.NextRound, a.Queued, a.Bytes, a.ID); err != nil {
			return fmt.Errorf("count usage of account %d: %w", a.ID, err)
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
