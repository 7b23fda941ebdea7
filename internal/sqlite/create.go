package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/narrator/narrator"
)

// Creates are committed in groups. SQLite has one writer, so concurrent
// creates wait for it in turn anyway; the one that holds it takes every
// create waiting at that moment, up to maxCreateBatch, into one
// transaction: each in a savepoint of its own, so that one create's error
// fails that create only, and the synthesis jobs of all of them in one
// River insert, which otherwise parses its long statement once per job.
// A create is answered only once its transaction is committed.
//
// With WAL and synchronous=FULL a commit is written to the WAL and the WAL
// fsynced before CreateAudio returns, so it survives the process being
// killed and a power failure at any moment; the group shares that one
// fsync (docs/architecture.md, "Durability and restarts").

// maxCreateBatch caps the creates of one transaction, which holds the
// writer for its whole length.
const maxCreateBatch = 128

// createRequest is one CreateAudio call waiting for or in a group.
type createRequest struct {
	ctx context.Context
	a   *narrator.Audio
	// created and err are the outcome, set before done and wake.
	created bool
	err     error
	done    bool
	// wake is closed once: when the request is done by another caller's
	// group, or when it is first in line and is to lead the next group.
	wake chan struct{}
}

// createQueue is the line of creates. Whenever it is not empty, one caller
// is leading a group (busy).
type createQueue struct {
	mu      sync.Mutex
	pending []*createRequest
	busy    bool
}

// writeStmts are a create's statements, prepared once on the writer.
type writeStmts struct {
	audioByExternalID *sql.Stmt
	insertAudio       *sql.Stmt
	insertMedia       *sql.Stmt
	addAudioCount     *sql.Stmt
	accountUsage      *sql.Stmt
	setSynthesisRound *sql.Stmt
	addUsage          *sql.Stmt
	savepoint         *sql.Stmt
	release           *sql.Stmt
	rollbackTo        *sql.Stmt
}

func prepareWrites(p *preparer) *writeStmts {
	return &writeStmts{
		audioByExternalID: p.stmt(findLiveAudioWithMediaByExternalIDSQL),
		insertAudio:       p.stmt(insertAudioSQL),
		insertMedia:       p.stmt(insertMediaSQL),
		addAudioCount:     p.stmt(addAudioCountSQL),
		accountUsage:      p.stmt(accountUsageSQL),
		setSynthesisRound: p.stmt(setSynthesisRoundSQL),
		addUsage:          p.stmt(addUsageSQL),
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
// Concurrent calls are committed together (see createQueue); each returns
// only after the commit of its own create, with its own error.
func (s *Store) CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error) {
	if err := a.Validate(); err != nil {
		return false, err
	}
	r := &createRequest{ctx: ctx, a: a, wake: make(chan struct{})}
	q := &s.creates
	q.mu.Lock()
	q.pending = append(q.pending, r)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !lead {
		// Not cancellable: the request may be in a group being committed.
		<-r.wake
	}
	if !r.done {
		s.leadCreates()
	}
	return r.created, r.err
}

// leadCreates commits the group at the head of the line, which starts with
// the caller's own request, then hands the lead to the next in line: even
// if the commit panics, so that the line never stalls.
func (s *Store) leadCreates() {
	q := &s.creates
	q.mu.Lock()
	n := min(len(q.pending), maxCreateBatch)
	group := make([]*createRequest, n)
	copy(group, q.pending)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	q.mu.Unlock()
	defer s.handOver(group)
	s.commitCreates(group)
}

// handOver answers the group's other callers and wakes the next in line to
// lead, or marks the line idle. A request left without an outcome (the
// commit panicked) fails.
func (s *Store) handOver(group []*createRequest) {
	for _, r := range group {
		if !r.done {
			r.done, r.created = true, false
			r.err = fmt.Errorf("create audio in project %d: the group's commit failed", r.a.ProjectID)
		}
	}
	q := &s.creates
	q.mu.Lock()
	var next *createRequest
	if len(q.pending) > 0 {
		next = q.pending[0]
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	// group[0] is the caller, which reads its outcome without waiting.
	for _, r := range group[1:] {
		close(r.wake)
	}
	if next != nil {
		close(next.wake)
	}
}

// commitCreates runs a group in one transaction and sets every request's
// outcome. A request whose context ended before its turn fails alone. If
// the transaction fails, every request of the group fails with its error.
func (s *Store) commitCreates(group []*createRequest) {
	// The group carries other callers' creates: one caller leaving must
	// not cancel them. A group is short.
	ctx := context.WithoutCancel(group[0].ctx)
	got, err := s.createGroup(ctx, group)
	for i, r := range group {
		r.done = true
		switch {
		case r.err != nil:
		case err != nil:
			r.created = false
			r.err = fmt.Errorf("create audio in project %d: %w", r.a.ProjectID, err)
		default:
			*r.a = *got[i]
		}
	}
}

// createGroup creates the group's audios in one transaction and returns
// them, nil where a request failed (its err set). Outcomes other than err
// are left to the caller, for after the commit.
func (s *Store) createGroup(ctx context.Context, group []*createRequest) ([]*narrator.Audio, error) {
	st, err := s.writes.get(ctx, s.writer)
	if err != nil {
		return nil, err
	}
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
	got := make([]*narrator.Audio, len(group))
	var (
		jobs []narrator.Job
		head headMemo
	)
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("create audio in project %d: %w", r.a.ProjectID, err)
			continue
		}
		if err := exec(st.savepoint); err != nil {
			return nil, err
		}
		a, created, job, err := s.createAudio(ctx, tx, st, &head, r.a)
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
		got[i], group[i].created = a, created
		if job != nil {
			jobs = append(jobs, job)
		}
	}
	if err := s.enqueueMany(ctx, tx, jobs); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return got, nil
}

const addAudioCountSQL = `UPDATE projects SET audio_count = audio_count + ? WHERE id = ?`

// addAudioCount moves a project's count of live audios by delta, in the
// transaction that creates or deletes them.
func addAudioCount(ctx context.Context, tx *sql.Tx, projectID int64, delta int) error {
	if _, err := tx.ExecContext(ctx, addAudioCountSQL, delta, projectID); err != nil {
		return fmt.Errorf("count audios of project %d: %w", projectID, err)
	}
	return nil
}

const insertAudioSQL = `
INSERT INTO audios (project_id, external_id, title, body, author, article_url, metadata,
	state, error, revision, duration_ms, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertMediaSQL = `INSERT INTO media (audio_id, content_type) VALUES (?, ?)`

// createAudio creates a, or updates the live audio with its external ID, in
// tx, as CreateAudio describes. A new audio's synthesis job is returned for
// the caller to enqueue, not enqueued. head is the group's memo of the
// synthesis queue's head.
func (s *Store) createAudio(ctx context.Context, tx *sql.Tx, st *writeStmts, head *headMemo, a *narrator.Audio) (*narrator.Audio, bool, narrator.Job, error) {
	// A missing project has no audio; planSynthesis finds it missing.
	if a.ExternalID != "" {
		cur, err := oneAudio(tx.StmtContext(ctx, st.audioByExternalID).QueryContext(ctx, a.ProjectID, a.ExternalID))
		if err != nil {
			return nil, false, nil, err
		}
		if cur != nil {
			got, err := s.updateAudio(ctx, tx, head, cur, a.Replacement())
			return got, false, nil, err
		}
	}

	round, err := s.planSynthesis(ctx, tx, head, a.ProjectID, true, true)
	if err != nil {
		return nil, false, nil, err
	}
	got := narrator.PlanCreate(a, s.now())
	meta, err := encodeMetadata(got.Metadata)
	if err != nil {
		return nil, false, nil, err
	}
	res, err := tx.StmtContext(ctx, st.insertAudio).ExecContext(ctx, got.ProjectID, nullString(got.ExternalID), got.Title, got.Body,
		got.Author, got.ArticleURL, meta, got.State, got.Error, got.Revision, got.DurationMS,
		micros(got.CreatedAt), micros(got.UpdatedAt))
	if err != nil {
		return nil, false, nil, formatError(err, "audio")
	}
	if got.ID, err = res.LastInsertId(); err != nil {
		return nil, false, nil, err
	}
	insertMedia := tx.StmtContext(ctx, st.insertMedia)
	for _, ct := range narrator.MediaTypes() {
		res, err := insertMedia.ExecContext(ctx, got.ID, ct)
		if err != nil {
			return nil, false, nil, fmt.Errorf("insert %s media: %w", ct, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, false, nil, fmt.Errorf("insert %s media: %w", ct, err)
		}
		got.Media = append(got.Media, narrator.Media{ID: id, AudioID: got.ID, ContentType: ct})
	}
	if _, err := tx.StmtContext(ctx, st.addAudioCount).ExecContext(ctx, 1, got.ProjectID); err != nil {
		return nil, false, nil, fmt.Errorf("count audios of project %d: %w", got.ProjectID, err)
	}
	if err := s.addUsage(ctx, tx, nil, &got); err != nil {
		return nil, false, nil, err
	}
	return &got, true, narrator.SynthesizeJob{AudioID: got.ID, Revision: got.Revision, Round: round}, nil
}
