package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// Creates are committed in groups, as on SQLite: concurrent creates wait
// for one another in a sqlstore.Group, and the one that leads takes every
// create waiting, up to sqlstore.MaxCreateGroup, into one transaction of
// two round trips, whatever the group's size (createGroup). The first
// begins the transaction, locks and reads each project's account, looks
// up the group's external IDs, checks the API keys of the creates made
// with one (CreateAudioWithKey), reads the synthesis queue's head and draws
// the new audios' IDs. The group is planned against the usage read; the
// second round trip then sends all its writes and the commit: the audios
// and their media, their publications, each account's usage, each
// project's count, the jobs. The locks are taken in the order every write
// takes them, accounts before projects. A create is answered only after
// that transaction is committed, so its row and its job are durable when
// it is. A group whose projects are those of the last group first tries
// to plan ahead, against what that group left, and to make one round trip
// (ahead.go).
//
// A create whose external ID names a live audio (an update), or repeats one
// earlier in the group, runs after the group in a transaction of its own
// (createAlone). So does a create whose API key did not pass, once
// AuthorizeProject has read the key again and found it good (a project
// created since the group's read). So does every create of a group whose
// transaction fails before its commit: an insert that meets an external
// ID taken since the lookup, a deadlock between nodes. Each then meets its own outcome. A
// group whose commit fails, or whose connection is lost before it knows
// whether the commit was made, fails its creates, as a lone create's would.

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
	return s.create(ctx, nil, a)
}

// CreateAudioWithKey is CreateAudio once the API key with this hash is
// found to be a live key of a.ProjectID's account; it returns
// AuthorizeProject's error otherwise, storing nothing. In a group, the
// key is read in the group's transaction, with the group's other keys, in
// the round trip that reads the accounts (unauthorizedSQL), so that it
// costs no statement of its own; a create whose key does not pass runs
// alone, and AuthorizeProject tells it why.
func (s *Store) CreateAudioWithKey(ctx context.Context, hash []byte, a *narrator.Audio) (created bool, err error) {
	return s.create(ctx, hash, a)
}

// create is CreateAudio, and CreateAudioWithKey if hash is set. A key's
// error comes before the audio's: an invalid audio made with a bad key is
// refused for its key, as on SQLite.
func (s *Store) create(ctx context.Context, hash []byte, a *narrator.Audio) (created bool, err error) {
	if s.alone {
		if hash != nil {
			if _, err := s.AuthorizeProject(ctx, hash, a.ProjectID); err != nil {
				return false, err
			}
		}
		return s.createAlone(ctx, a)
	}
	c, err := s.creates.Create(ctx, a, hash, s.createGroup)
	if err != nil {
		if hash != nil {
			if _, authErr := s.AuthorizeProject(ctx, hash, a.ProjectID); authErr != nil {
				return false, authErr
			}
		}
		return false, err
	}
	if !c.Alone {
		return c.Created, c.Err
	}
	if hash != nil {
		if _, err := s.AuthorizeProject(ctx, hash, a.ProjectID); err != nil {
			return false, err
		}
	}
	return s.createAlone(ctx, a)
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
	alone := func() {
		for _, c := range batch {
			c.Alone, c.Err = true, nil
		}
	}
	if s.jobs == nil {
		// createAlone says why.
		alone()
		return
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		for _, c := range batch {
			c.Fail(fmt.Errorf("begin write: %w", unavailable(err)))
		}
		return
	}
	// The pool closes a connection left in a transaction.
	defer conn.Release()
	markRepeats(batch)
	plan := s.createAhead(ctx, conn.Conn(), batch)
	if plan == planAhead {
		s.recordGroup(plan)
		return
	}
	// The long way: what createAhead tried, if anything, is what it
	// records.
	defer s.recordGroup(plan)
	byProject, read, err := s.readGroup(ctx, conn.Conn(), batch)
	if err != nil {
		endGroup(ctx, conn.Conn())
		alone()
		return
	}
	g := s.planGroup(batch, byProject, read.head, s.now())
	if len(g.made) == 0 {
		endGroup(ctx, conn.Conn())
		return
	}
	// readGroup drew an ID for every create it did not mark alone, of
	// which planning keeps some.
	made := make([]*narrator.Audio, len(g.made))
	for k, i := range g.made {
		made[k] = g.got[i]
		made[k].ID = read.ids[k]
	}
	switch err := s.writeGroup(ctx, conn.Conn(), g, made, nil, s.traceEffect); {
	case err == nil:
		for _, i := range g.made {
			*batch[i].Audio, batch[i].Created = *g.got[i], true
		}
		s.ahead.remember(byProject, g, read.head)
		s.analyzeNew(len(made))
	case conn.Conn().PgConn().TxStatus() == 'E':
		// PostgreSQL failed a write, and so the transaction, before its
		// commit: nothing was written, and each create finds out alone.
		endGroup(ctx, conn.Conn())
		alone()
	default:
		// The commit failed, or the connection did, or the writes were
		// never sent (an enqueuer's error): none is known to be committed.
		endGroup(ctx, conn.Conn())
		for _, i := range g.made {
			batch[i].Fail(unavailable(err))
		}
	}
}

// analyzeAfter is how many audios a store creates before it makes sure,
// once, that the database has statistics on them (analyzeNew).
const analyzeAfter = 1000

// analyzeNewSQL gathers statistics on the audios if they have none,
// waiting at most a second for the table's lock (a VACUUM, an index being
// built).
const analyzeNewSQL = `
DO $$ BEGIN
	IF (SELECT reltuples < 0 FROM pg_class WHERE oid = 'audios'::regclass) THEN
		PERFORM set_config('lock_timeout', '1s', true);
		ANALYZE audios;
	END IF;
END $$`

// analyzeNew gathers statistics on the audios, in the background, if they
// have none once the store has created analyzeAfter audios (a test sets
// fewer), counting the n a group just did. On a new database, autovacuum
// first analyzes a table up to a minute (autovacuum_naptime) after its
// first writes. Until then the planner knows nothing of how the audios
// spread over projects: the plans the pool's connections cache then look
// an external ID up through audios_list, or number an audio by reading its
// project's audios in seq order, and so read every audio of the project,
// which a burst of creates makes thousands. New statistics replace those
// plans. Statistics taken earlier, on a table of a few rows, would be
// worse: they make a scan of the whole table look cheapest. It is an
// optimisation: its error is of no use to the creates, already committed.
func (s *Store) analyzeNew(n int) {
	if s.created.Add(int64(n)) < s.analyzeAfter || !s.analyzed.CompareAndSwap(false, true) {
		return
	}
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(s.closing, time.Minute)
		defer cancel()
		_, _ = s.pool.Exec(ctx, analyzeNewSQL)
	})
}

// endGroup rolls back the transaction a group of creates left open on
// conn, if any. If it cannot, the pool closes conn as it is released,
// which ends the transaction too.
func endGroup(ctx context.Context, conn *pgx.Conn) {
	if conn.PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(ctx, "ROLLBACK")
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
	// planned maps each account as read to its copy in accounts.
	planned map[*sqlstore.GroupAccount]*sqlstore.GroupAccount
	count   map[int64]int
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
	g.planned = accounts
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

// liveExternalIDsSQL returns the ordinal (n) of each pair of a project
// ($1) and an external ID ($2) that a live audio holds: one probe of the
// audios_external_id index each, in one statement for the group. Until
// the audios have statistics, PostgreSQL plans this and every other
// lookup of an external ID through audios_list, which also leads with
// project_id, and so reads the project's audios; analyzeNew bounds that
// to a new database's first creates.
const liveExternalIDsSQL = `
SELECT r.n
FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS r(project_id, external_id, n)
WHERE ` + liveExternalID

// liveExternalID holds when a live audio of the project r.project_id has
// the external ID r.external_id: a probe of the audios_external_id index.
const liveExternalID = `EXISTS (
	SELECT FROM audios a
	WHERE a.project_id = r.project_id AND a.external_id = r.external_id
		AND a.external_id IS NOT NULL AND a.deleted_at IS NULL)`

// unauthorizedSQL returns the ordinal (n) of each pair of a project ($1)
// and an API key's hash ($2) in which the key is not a live key of the
// project's account, or the project does not exist (unauthorized).
const unauthorizedSQL = `
SELECT r.n
FROM unnest($1::bigint[], $2::bytea[]) WITH ORDINALITY AS r(project_id, hash, n)
WHERE ` + unauthorized

// unauthorized holds when the API key whose hash is r.hash is not a live
// key of the account of the project r.project_id, or the project does not
// exist. Each side is a probe of a unique index (scalar subqueries, which
// PostgreSQL cannot make a join of): as an anti-join, on a database
// without statistics, it was planned as a scan of every project and key.
const unauthorized = `NOT coalesce(
	(SELECT p.account_id FROM projects p WHERE p.id = r.project_id) =
	(SELECT k.account_id FROM api_keys k WHERE k.hash = r.hash AND k.revoked_at IS NULL),
	false)`

// genericPlansSQL makes the statements of a group's transaction run
// their generic plans, made once per connection and statement. PostgreSQL
// otherwise plans insertAudiosSQL and nextAudioIDsSQL anew at every run:
// it estimates their generic plans costlier than the plans made for the
// arrays given, so it never switches to them, and pg_stat_statements
// showed planning insertAudiosSQL, a write of 14 arrays into two tables,
// costing a large part of its execution. The plans are the
// same either way; the group's other statements use their generic plans
// already. SET LOCAL ends with the transaction.
const genericPlansSQL = `SET LOCAL plan_cache_mode = force_generic_plan`

// groupAccountsSQL locks and reads the accounts of the projects $1, one
// row for each project that exists, in the order of the accounts' IDs:
// two groups, on two nodes, whose projects span the same accounts take
// their locks in one order, and neither waits for a lock the other holds
// while holding one it wants. ORDER BY comes before the locks.
const groupAccountsSQL = `
SELECT p.id, ac.id, ac.queued, ac.media_bytes, ac.synthesis_round
FROM projects p JOIN accounts ac ON ac.id = p.account_id
WHERE p.id = ANY($1)
ORDER BY ac.id
FOR UPDATE OF ac`

// groupRead is what a group's first round trip reads besides its
// accounts: the head of the synthesis queue, and IDs for its new audios.
type groupRead struct {
	head int64
	ids  []int64
}

// nextAudioIDsSQL draws $1 IDs for new audios from the audios' identity.
const nextAudioIDsSQL = `
SELECT nextval(seq) FROM CAST(pg_get_serial_sequence('audios', 'id') AS regclass) AS seq, generate_series(1, $1)`

// readGroup begins a group's transaction on conn and reads, in one round
// trip, what the group's creates depend on. It locks and reads the account
// of each project of the group, in the order of the accounts' IDs
// (groupAccountsSQL), and returns the accounts by project (none for a
// missing project), one value for the projects of one account. Of the
// creates not marked alone already (markRepeats), it marks to run alone
// those whose external ID a live audio holds, which they update, and those
// made with an API key that is not a live key of their project's account
// (CreateCall.KeyHash). It reads the head of the synthesis queue
// (JobInserter.QueueSynthesisHead) and takes an ID for each of those
// creates, in order (ahead.draw).
//
// The lookup keeps the group's insert from waiting on a write to a live
// audio of the same external ID (a delete, an update), which locks the
// audio before its account: the insert would wait for that write while
// the write waits for the account the group holds.
func (s *Store) readGroup(ctx context.Context, conn *pgx.Conn, batch []*sqlstore.CreateCall) (map[int64]*sqlstore.GroupAccount, *groupRead, error) {
	projects := groupProjects(batch)
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(genericPlansSQL)
	byProject := map[int64]*sqlstore.GroupAccount{}
	b.Queue(groupAccountsSQL, projects).Query(func(rows pgx.Rows) error {
		byID := map[int64]*sqlstore.GroupAccount{}
		for rows.Next() {
			var projectID int64
			a := &sqlstore.GroupAccount{}
			if err := rows.Scan(&projectID, &a.ID, &a.Usage.Queued, &a.Usage.MediaBytes, &a.Usage.NextRound); err != nil {
				return fmt.Errorf("read the group's accounts: %w", err)
			}
			// Another project of the same account shares its usage.
			if prev := byID[a.ID]; prev != nil {
				a = prev
			}
			byID[a.ID], byProject[projectID] = a, a
		}
		return rows.Err()
	})
	var (
		n      int
		probed []*sqlstore.CreateCall
		keyed  []*sqlstore.CreateCall
	)
	for _, c := range batch {
		if c.Alone {
			continue
		}
		n++
		if c.Audio.ExternalID != "" {
			probed = append(probed, c)
		}
		if c.KeyHash != nil {
			keyed = append(keyed, c)
		}
	}
	if len(probed) > 0 {
		projects, externalIDs := make([]int64, len(probed)), make([]string, len(probed))
		for i, c := range probed {
			projects[i], externalIDs[i] = c.Audio.ProjectID, c.Audio.ExternalID
		}
		b.Queue(liveExternalIDsSQL, projects, externalIDs).Query(markAlone(probed, "find external IDs"))
	}
	if len(keyed) > 0 {
		projects, hashes := make([]int64, len(keyed)), make([][]byte, len(keyed))
		for i, c := range keyed {
			projects[i], hashes[i] = c.Audio.ProjectID, c.KeyHash
		}
		b.Queue(unauthorizedSQL, projects, hashes).Query(markAlone(keyed, "check API keys"))
	}
	read := &groupRead{}
	s.jobs.QueueSynthesisHead(b, &read.head)
	s.ahead.draw(b, n, &read.ids)
	// The statements without a function are read here, in order; Close
	// runs the others'.
	res := conn.SendBatch(ctx, b)
	defer res.Close()
	for range 2 { // BEGIN, SET LOCAL
		if _, err := res.Exec(); err != nil {
			return nil, nil, fmt.Errorf("begin write: %w", unavailable(err))
		}
	}
	if err := res.Close(); err != nil {
		return nil, nil, fmt.Errorf("read group: %w", unavailable(err))
	}
	if len(read.ids) < n {
		return nil, nil, fmt.Errorf("read group: %d audio IDs drawn for %d creates", len(read.ids), n)
	}
	return byProject, read, nil
}

// markAlone returns a function that reads ordinals, one a row, and marks
// the calls they number, from 1, to run alone; what says what the rows
// are, for an error.
func markAlone(calls []*sqlstore.CreateCall, what string) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var k int64
		_, err := pgx.ForEachRow(rows, []any{&k}, func() error {
			if k < 1 || k > int64(len(calls)) {
				return fmt.Errorf("%s: ordinal %d of %d", what, k, len(calls))
			}
			calls[k-1].Alone = true
			return nil
		})
		return err
	}
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

// insertAudiosSQL inserts a group's audios with the IDs drawn for them,
// each numbered in its project (seq) after the project's highest in the
// order given, as sqlstore.CreateAudio numbers one (the accounts' rows, locked
// before, serialise the creates of a project), and their media rows, one
// of each of $15 (narrator.MediaTypes) for each audio, still without keys.
// It returns the media (id, audio, content type). An audio whose external
// ID a live audio of its project has taken since the group's lookup fails
// the statement, and so the group's transaction.
const insertAudiosSQL = `
WITH added AS (
	INSERT INTO audios (id, ` + sqlstore.AudioInsertColumns + `) OVERRIDING SYSTEM VALUE
	SELECT r.id, r.project_id, r.external_id, r.title, r.body, r.author, r.article_url, r.metadata::jsonb,
		r.state, r.error, r.revision, r.duration_ms, r.created_at, r.updated_at,
		(SELECT coalesce(max(seq), 0) FROM audios a WHERE a.project_id = r.project_id)
			+ row_number() OVER (PARTITION BY r.project_id ORDER BY r.n)
	FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
		$9::text[], $10::text[], $11::integer[], $12::bigint[], $13::timestamptz[], $14::timestamptz[])
		WITH ORDINALITY AS r(id, project_id, external_id, title, body, author, article_url, metadata,
		state, error, revision, duration_ms, created_at, updated_at, n)
	ORDER BY r.n
	RETURNING id
)
INSERT INTO media (audio_id, content_type)
SELECT added.id, t.content_type
FROM added, unnest($15::text[]) WITH ORDINALITY AS t(content_type, o)
ORDER BY added.id, t.o
RETURNING id, audio_id, content_type`

const addGroupUsageSQL = `
UPDATE accounts SET synthesis_round = $1, queued = queued + $2, media_bytes = media_bytes + $3
WHERE id = $4`

// writeGroup sends, in one round trip on conn, after the statements
// already in b if b is not nil, the writes of the planned group g, whose
// new audios (made) have their IDs, and the commit of its transaction:
// the audios and their media (queueInsertAudios), their publications,
// then the group's effects (queueGroupEffects). It sets the audios'
// media. When it fails, the connection's transaction status tells whether
// the transaction failed before its commit ('E'); otherwise the commit
// failed, or the connection did before it could tell.
func (s *Store) writeGroup(ctx context.Context, conn *pgx.Conn, g *plannedGroup, made []*narrator.Audio, b *pgx.Batch, trace func(narrator.EffectStep)) error {
	var jobs []narrator.Job
	for k, a := range made {
		jobs = append(jobs, g.effs[k].Jobs(a)...)
	}
	if b == nil {
		b = &pgx.Batch{}
	}
	media := queueInsertAudios(b, &g.rows, made)
	// A project whose new audios wait as drafts gets their publications
	// (sqlstore.InsertNewPublications).
	query, args := sqlstore.NewPublications(dialect{s}, made)
	b.Queue(numbered(query), args...)
	if err := s.queueGroupEffects(b, g, jobs, trace); err != nil {
		return err
	}
	// A COMMIT ends a transaction that failed as a rollback, without an
	// error: its tag tells which it was. Once it reads COMMIT the group is
	// committed, whatever the connection does next.
	committed := false
	b.Queue(`COMMIT`).Exec(func(tag pgconn.CommandTag) error {
		committed = tag.String() == "COMMIT"
		return nil
	})
	err := conn.SendBatch(ctx, b).Close()
	if !committed {
		if len(jobs) > 0 {
			// Its announcement, if it queued one, went with it; the
			// group's retry announces its jobs.
			s.jobs.Unannounce()
		}
		if err != nil {
			return fmt.Errorf("write group: %w", err)
		}
		return errors.New("write group: the transaction was rolled back at its commit")
	}
	sqlstore.SetMedia(made, *media)
	return nil
}

// queueInsertAudios queues in b the insert of a group's new audios, made,
// whose rows are rows, and of their media (insertAudiosSQL). The media
// the insert returns are read into what it returns, once b is sent.
func queueInsertAudios(b *pgx.Batch, rows *groupRows, made []*narrator.Audio) *[]narrator.Media {
	ids := make([]int64, len(made))
	for k, a := range made {
		ids[k] = a.ID
	}
	media := new([]narrator.Media)
	b.Queue(insertAudiosSQL, ids, rows.projectID, rows.externalID, rows.title, rows.body, rows.author,
		rows.articleURL, rows.metadata, rows.state, rows.error, rows.revision, rows.durationMS, rows.createdAt, rows.updatedAt,
		narrator.MediaTypes()).Query(func(res pgx.Rows) error {
		var m narrator.Media
		_, err := pgx.ForEachRow(res, []any{&m.ID, &m.AudioID, &m.ContentType}, func() error {
			*media = append(*media, m)
			return nil
		})
		return err
	})
	return media
}

// queueGroupEffects queues in b the effects of the group g, whose new
// audios' jobs are jobs: the steps of narrator.Effects in their order for
// the whole group, the accounts' rows, then the projects' counts, then the
// jobs, each told to trace as it is queued. A create raises no webhook
// event.
func (s *Store) queueGroupEffects(b *pgx.Batch, g *plannedGroup, jobs []narrator.Job, trace func(narrator.EffectStep)) error {
	traced := false
	for _, a := range g.accounts {
		if !a.Changed {
			continue
		}
		if !traced {
			trace(narrator.StepUsage)
			traced = true
		}
		b.Queue(addGroupUsageSQL, a.Usage.NextRound, a.Queued, a.Bytes, a.ID)
	}
	projects := slices.Sorted(maps.Keys(g.count))
	if len(projects) > 0 {
		trace(narrator.StepAudioCount)
	}
	for _, projectID := range projects {
		b.Queue(addAudioCountSQL, g.count[projectID], projectID)
	}
	if len(jobs) > 0 {
		trace(narrator.StepJobs)
		if err := s.jobs.QueueInsertMany(b, jobs); err != nil {
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
