package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// Creates are committed in groups, as on SQLite: concurrent creates wait
// for one another in a sqlstore.Group, and the one that leads takes every
// create waiting, up to sqlstore.MaxCreateGroup, into one transaction of a few
// round trips, whatever the group's size: each project's account locked
// and read, its external IDs looked up, and the synthesis queue's head
// read, in one batch; all audios and their media inserted by one
// statement, which skips an audio whose external ID a live audio has
// taken since the lookup; their publications, each account's usage and
// each project's count written, in one batch; the jobs inserted at once;
// the commit. The locks are
// taken in the order every write takes them, accounts before projects. A
// create is answered only after that transaction is committed, so its row
// and its job are durable when it is.
//
// A create whose external ID names a live audio (an update), or repeats one
// earlier in the group, runs after the group in a transaction of its own
// (createAlone); if the insert skipped it, the insert is rolled back to a
// savepoint and run again without it, so that the group's limits and
// effects count only what it creates. So does every create of a group
// whose transaction fails before its commit (a deadlock between nodes):
// each then meets its own outcome. A group's failed commit fails
// its creates, as a lone create's would.

// CreateAudio validates a.
//
// If a.ExternalID is set and a live audio of a.ProjectID has it, CreateAudio
// updates that audio as UpdateAudio would with every article field given
// (title, body, author, article_url and metadata replaced), fills a with the
// stored result and returns created=false.
//
// Otherwise it inserts the audio as narrator.PlanCreate makes it
// (unprocessed, revision 1) with its media, still without keys, enqueues its
// synthesis in the same transaction, fills a in and returns created=true.
// If the enqueuer fails, nothing is stored. It returns ENOTFOUND if the
// project does not exist, and EQUOTA or EQUEUEFULL, storing nothing, if the
// project's account is over its limits (narrator.Limits.CheckSynthesis).
//
// Concurrent calls are committed together (sqlstore.Creates); each
// returns only after the commit of its own create, with its own error.
// When another node creates an audio with the same external ID at the same
// moment, one insert goes through and the other create updates that audio.
func (s *Store) CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error) {
	c, err := s.creates.Create(ctx, a, s.createGroup)
	if err != nil {
		return false, err
	}
	if c.Alone {
		return s.createAlone(ctx, a)
	}
	return c.Created, c.Err
}

// createGroup runs a group of creates in one transaction and sets each
// call's outcome, or marks it to run alone. It plans the group as a whole,
// so it takes no more calls once under way.
func (s *Store) createGroup(calls []*sqlstore.CreateCall, _ func() []*sqlstore.CreateCall) {
	// The group carries other callers' creates: one caller leaving must
	// not cancel them. A group is short.
	ctx := context.WithoutCancel(calls[0].Ctx)
	batch := sqlstore.Live(calls)
	if len(batch) == 0 {
		return
	}
	fail := func(err error) {
		for _, c := range batch {
			if !c.Alone && c.Err == nil {
				c.Fail(err)
			}
		}
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		fail(err)
		return
	}
	defer rollback(ctx, tx)
	got, err := s.insertGroup(ctx, tx, batch)
	if err != nil {
		for _, c := range batch {
			c.Alone, c.Err = true, nil
		}
		return
	}
	if err := tx.Commit(ctx); err != nil {
		fail(fmt.Errorf("commit: %w", unavailable(err)))
		return
	}
	for i, c := range batch {
		if got[i] != nil {
			*c.Audio, c.Created = *got[i], true
		}
	}
}

// insertAudiosSQL inserts a group's audios, each numbered in its project
// (seq) after the project's highest in the order given, as insertAudioSQL
// numbers one (the accounts' rows, locked before, serialise the creates of
// a project), and their media rows, one of each of $14
// (narrator.MediaTypes) for each audio, still without keys. An audio whose
// external ID a live audio of its project holds is not inserted. It returns
// the audios (id, project, number, external ID) and the media (id, audio,
// content type).
const insertAudiosSQL = `
WITH added AS (
	INSERT INTO audios (` + sqlstore.AudioInsertColumns + `)
	SELECT r.project_id, r.external_id, r.title, r.body, r.author, r.article_url, r.metadata::jsonb,
		r.state, r.error, r.revision, r.duration_ms, r.created_at, r.updated_at,
		(SELECT coalesce(max(seq), 0) FROM audios a WHERE a.project_id = r.project_id)
			+ row_number() OVER (PARTITION BY r.project_id ORDER BY r.n)
	FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::integer[], $11::bigint[], $12::timestamptz[], $13::timestamptz[])
		WITH ORDINALITY AS r(project_id, external_id, title, body, author, article_url, metadata,
		state, error, revision, duration_ms, created_at, updated_at, n)
	ORDER BY r.n
	ON CONFLICT (project_id, external_id) WHERE deleted_at IS NULL AND external_id IS NOT NULL DO NOTHING
	RETURNING id, project_id, seq, external_id
), media AS (
	INSERT INTO media (audio_id, content_type)
	SELECT added.id, t.content_type
	FROM added, unnest($14::text[]) WITH ORDINALITY AS t(content_type, o)
	ORDER BY added.id, t.o
	RETURNING id, audio_id, content_type
)
SELECT id, project_id, seq, external_id, NULL::text FROM added
UNION ALL
SELECT id, audio_id, NULL::bigint, NULL::text, content_type FROM media`

const addGroupUsageSQL = `
UPDATE accounts SET synthesis_round = $1, queued = queued + $2, media_bytes = media_bytes + $3
WHERE id = $4`

// insertGroup creates, in tx, the audios of batch that need no update and
// returns them, nil where a call failed (its err set) or is to run alone.
// Its error means the transaction cannot be committed.
func (s *Store) insertGroup(ctx context.Context, tx pgx.Tx, batch []*sqlstore.CreateCall) ([]*narrator.Audio, error) {
	if s.jobs == nil {
		return nil, errors.New("queue synthesis: the postgres store was opened without a job inserter")
	}
	byProject, head, err := s.readGroup(ctx, tx, batch)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for {
		g := s.planGroup(batch, byProject, head, now)
		if len(g.made) == 0 {
			return g.got, nil
		}
		taken, err := insertAudios(ctx, tx, g)
		if err != nil {
			return nil, err
		}
		if len(taken) > 0 {
			// Audios of the group hold these external IDs: their creates
			// update them, alone, and the group runs again without them.
			for _, i := range g.made {
				if c := batch[i]; taken[externalKey{c.Audio.ProjectID, c.Audio.ExternalID}] {
					c.Alone = true
				}
			}
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT insert_group`); err != nil {
				return nil, fmt.Errorf("insert audios: %w", unavailable(err))
			}
			continue
		}
		// The jobs name the audios, known once inserted.
		var jobs []narrator.Job
		made := make([]*narrator.Audio, len(g.made))
		for k, i := range g.made {
			made[k] = g.got[i]
			jobs = append(jobs, g.effs[k].Jobs(g.got[i])...)
		}
		return g.got, s.writeGroupEffects(ctx, tx, made, g.accounts, g.count, jobs)
	}
}

// externalKey names a live audio by its project and external ID.
type externalKey struct {
	projectID  int64
	externalID string
}

// plannedGroup is what a group's creates will insert: the audios got[i]
// for i in made, in that order, with their rows and effects, and the
// changes to their accounts and projects.
type plannedGroup struct {
	got      []*narrator.Audio
	made     []int
	effs     []narrator.Effects
	rows     groupRows
	accounts []*sqlstore.GroupAccount
	count    map[int64]int
}

// planGroup plans the creates of batch not marked alone, in order, each
// against its account's usage (byProject, as read) as the creates before
// it leave it. A create over its account's limits fails, or runs alone if
// it names an external ID.
func (s *Store) planGroup(batch []*sqlstore.CreateCall, byProject map[int64]*sqlstore.GroupAccount, head int64, now time.Time) *plannedGroup {
	g := &plannedGroup{got: make([]*narrator.Audio, len(batch)), count: map[int64]int{}}
	// A copy of each account per plan: a plan run again starts from the
	// usage as read.
	accounts := map[*sqlstore.GroupAccount]*sqlstore.GroupAccount{}
	for i, c := range batch {
		c.Err = nil
		if c.Alone {
			continue
		}
		read := byProject[c.Audio.ProjectID]
		if read == nil {
			c.Err = narrator.Errorf(narrator.ENOTFOUND, "project %d not found", c.Audio.ProjectID)
			continue
		}
		acct := accounts[read]
		if acct == nil {
			acct = &sqlstore.GroupAccount{ID: read.ID, Usage: read.Usage}
			accounts[read] = acct
			g.accounts = append(g.accounts, acct)
		}
		a, eff, err := acct.PlanCreate(s.limits, head, c.Audio, now)
		if err != nil {
			// A create with an external ID may be an update, which the
			// limits may let through: it runs alone, and finds out.
			if c.Audio.ExternalID != "" {
				c.Alone = true
			} else {
				c.Err = err
			}
			continue
		}
		if err := g.rows.add(&a); err != nil {
			c.Err = err
			continue
		}
		acct.Count(eff)
		g.count[a.ProjectID] += eff.AudioCount
		g.got[i] = &a
		g.made = append(g.made, i)
		g.effs = append(g.effs, eff)
	}
	return g
}

// liveExternalIDSQL returns a row if a live audio of a project has an
// external ID: a probe of the audios_external_id index. A group probes
// each of its external IDs with it. Other shapes of the lookup were
// cached, on a new database before its first ANALYZE, as plans that read
// the project's audios through audios_list, which also leads with
// project_id, and grew with the project (2.6 ms a group at 8,000 audios):
// one join of the group's IDs against the table, and this probe inside
// EXISTS, which is planned for its first row.
const liveExternalIDSQL = `
SELECT true FROM audios
WHERE project_id = $1 AND external_id = $2 AND external_id IS NOT NULL AND deleted_at IS NULL`

// readGroup reads, in one round trip, what a group's creates depend on. It
// locks and reads the account of each project of the group, in the order of
// the projects' IDs, and returns the accounts by project (none for a
// missing project), one value for the projects of one account, and the
// head of the synthesis queue (JobInserter.QueueSynthesisHead). It marks to
// run alone the creates whose external ID a live audio holds, which they
// update, or repeats one earlier in the group, which they will find once
// the group is committed. It sets the savepoint insert_group, from which
// an insert that met external IDs taken since is run again.
//
// The lookup keeps the group's insert from waiting on a write to a live
// audio of the same external ID (a delete, an update), which locks the
// audio before its account: the insert would wait for that write while
// the write waits for the account the group holds.
func (s *Store) readGroup(ctx context.Context, tx pgx.Tx, batch []*sqlstore.CreateCall) (map[int64]*sqlstore.GroupAccount, int64, error) {
	seen := map[externalKey]bool{}
	var projects []int64
	for _, c := range batch {
		if !slices.Contains(projects, c.Audio.ProjectID) {
			projects = append(projects, c.Audio.ProjectID)
		}
		if c.Audio.ExternalID == "" {
			continue
		}
		k := externalKey{c.Audio.ProjectID, c.Audio.ExternalID}
		if seen[k] {
			c.Alone = true
		}
		seen[k] = true
	}
	slices.Sort(projects)
	b := &pgx.Batch{}
	for _, projectID := range projects {
		b.Queue(accountUsageSQL, projectID)
	}
	for _, c := range batch {
		if c.Audio.ExternalID == "" || c.Alone {
			continue
		}
		b.Queue(liveExternalIDSQL, c.Audio.ProjectID, c.Audio.ExternalID).QueryRow(func(row pgx.Row) error {
			var live bool
			switch err := row.Scan(&live); {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return fmt.Errorf("find external ID %q: %w", c.Audio.ExternalID, err)
			default:
				c.Alone = true
			}
			return nil
		})
	}
	b.Queue(`SAVEPOINT insert_group`)
	var head int64
	s.jobs.QueueSynthesisHead(b, &head)
	res := tx.SendBatch(ctx, b)
	defer res.Close()
	byProject := map[int64]*sqlstore.GroupAccount{}
	var accounts []*sqlstore.GroupAccount
	for _, projectID := range projects {
		a := &sqlstore.GroupAccount{}
		err := res.QueryRow().Scan(&a.ID, &a.Usage.Queued, &a.Usage.MediaBytes, &a.Usage.NextRound)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return nil, 0, fmt.Errorf("usage of project %d's account: %w", projectID, err)
		}
		// Another project of the same account shares its usage.
		if i := slices.IndexFunc(accounts, func(o *sqlstore.GroupAccount) bool { return o.ID == a.ID }); i >= 0 {
			a = accounts[i]
		} else {
			accounts = append(accounts, a)
		}
		byProject[projectID] = a
	}
	if err := res.Close(); err != nil {
		return nil, 0, fmt.Errorf("read group: %w", unavailable(err))
	}
	return byProject, head, nil
}

// groupRows are a group's new audios, a column a slice, as
// insertAudiosSQL takes them.
type groupRows struct {
	projectID  []int64
	externalID []*string
	title      []string
	body       []string
	author     []string
	articleURL []string
	metadata   []string
	state      []string
	error      []string
	revision   []int
	durationMS []int64
	createdAt  []time.Time
	updatedAt  []time.Time
}

// add appends a's row.
func (r *groupRows) add(a *narrator.Audio) error {
	meta := []byte("{}")
	if len(a.Metadata) > 0 {
		var err error
		if meta, err = json.Marshal(a.Metadata); err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
	}
	r.projectID = append(r.projectID, a.ProjectID)
	r.externalID = append(r.externalID, nullString(a.ExternalID))
	r.title = append(r.title, a.Title)
	r.body = append(r.body, a.Body)
	r.author = append(r.author, a.Author)
	r.articleURL = append(r.articleURL, a.ArticleURL)
	r.metadata = append(r.metadata, string(meta))
	r.state = append(r.state, a.State)
	r.error = append(r.error, a.Error)
	r.revision = append(r.revision, a.Revision)
	r.durationMS = append(r.durationMS, a.DurationMS)
	r.createdAt = append(r.createdAt, a.CreatedAt)
	r.updatedAt = append(r.updatedAt, a.UpdatedAt)
	return nil
}

// insertAudios inserts g's audios with their media and sets their IDs
// and media. If live audios hold some of their external IDs, it inserts
// the others and returns those IDs, setting nothing: the caller rolls the
// insert back.
func insertAudios(ctx context.Context, tx pgx.Tx, g *plannedGroup) (taken map[externalKey]bool, err error) {
	rows := &g.rows
	res, err := tx.Query(ctx, insertAudiosSQL, rows.projectID, rows.externalID, rows.title, rows.body, rows.author,
		rows.articleURL, rows.metadata, rows.state, rows.error, rows.revision, rows.durationMS, rows.createdAt, rows.updatedAt,
		narrator.MediaTypes())
	if err != nil {
		return nil, fmt.Errorf("insert audios: %w", err)
	}
	// A project's audios are numbered in the order given: the k-th lowest
	// number returned for a project is its k-th audio of the group.
	type numbered struct{ id, seq int64 }
	byProject := map[int64][]numbered{}
	inserted := map[externalKey]bool{}
	var media []narrator.Media
	var (
		id, ref                 int64
		seq                     *int64
		externalID, contentType *string
	)
	if _, err := pgx.ForEachRow(res, []any{&id, &ref, &seq, &externalID, &contentType}, func() error {
		switch {
		case contentType != nil:
			media = append(media, narrator.Media{ID: id, AudioID: ref, ContentType: *contentType})
		default:
			byProject[ref] = append(byProject[ref], numbered{id, *seq})
			if externalID != nil {
				inserted[externalKey{ref, *externalID}] = true
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("insert audios: %w", err)
	}
	for _, i := range g.made {
		a := g.got[i]
		if k := (externalKey{a.ProjectID, a.ExternalID}); a.ExternalID != "" && !inserted[k] {
			if taken == nil {
				taken = map[externalKey]bool{}
			}
			taken[k] = true
		}
	}
	if taken != nil {
		return taken, nil
	}
	for _, l := range byProject {
		slices.SortFunc(l, func(x, y numbered) int { return cmp.Compare(x.seq, y.seq) })
	}
	byID := make(map[int64]*narrator.Audio, len(g.made))
	for _, i := range g.made {
		a := g.got[i]
		l := byProject[a.ProjectID]
		if len(l) == 0 {
			return nil, fmt.Errorf("insert audios: no row returned for an audio of project %d", a.ProjectID)
		}
		a.ID, byProject[a.ProjectID] = l[0].id, l[1:]
		a.Media = make([]narrator.Media, 0, len(narrator.MediaTypes()))
		byID[a.ID] = a
	}
	for _, m := range media {
		if a := byID[m.AudioID]; a != nil {
			a.Media = append(a.Media, m)
		}
	}
	for _, a := range byID {
		narrator.SortMedia(a.Media)
	}
	return nil, nil
}

// writeGroupEffects writes the publications of the group's new audios
// (made), then its effects, the steps of narrator.Effects in their order
// for the whole group: the accounts' rows, then the projects' counts,
// then the jobs. A create raises no webhook event.
func (s *Store) writeGroupEffects(ctx context.Context, tx pgx.Tx, made []*narrator.Audio, accounts []*sqlstore.GroupAccount, count map[int64]int, jobs []narrator.Job) error {
	// A project whose new audios wait as drafts gets their publications
	// (sqlstore.InsertNewPublications); then the accounts' rows and the
	// projects' counts; all in one round trip.
	b := &pgx.Batch{}
	query, ids := sqlstore.NewPublications(made)
	b.Queue(numbered(query), ids...)
	for _, a := range accounts {
		if !a.Changed {
			continue
		}
		if b.Len() == 1 {
			s.traceEffect(narrator.StepUsage)
		}
		b.Queue(addGroupUsageSQL, a.Usage.NextRound, a.Queued, a.Bytes, a.ID)
	}
	projects := slices.Sorted(maps.Keys(count))
	if len(projects) > 0 {
		s.traceEffect(narrator.StepAudioCount)
	}
	for _, projectID := range projects {
		b.Queue(addAudioCountSQL, count[projectID], projectID)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("publications, usage and counts: %w", unavailable(err))
	}
	if len(jobs) > 0 {
		s.traceEffect(narrator.StepJobs)
		if err := s.jobs.InsertManyTx(ctx, tx, jobs); err != nil {
			return fmt.Errorf("enqueue %d jobs: %w", len(jobs), err)
		}
	}
	return nil
}

// traceEffect tells Options.EffectFunc, if any, of an effect step about to
// be applied.
func (s *Store) traceEffect(step narrator.EffectStep) {
	if s.effect != nil {
		s.effect(step)
	}
}
