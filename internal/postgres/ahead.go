package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/sqlstore"
)

// A group of creates in one round trip. A group plans against its
// accounts' usage and the synthesis queue's head (planGroup), which it
// reads, in the transaction, in a round trip before its writes
// (readGroup). Between two groups of one node, though, these mostly stay
// as the first group left them: only workers, and other nodes' writes to
// the same accounts, move them. So a group whose projects are those of
// the last group plans ahead, against what that group left
// (ahead.remember), with IDs drawn ahead, and sends, in one round trip,
// the checks that the plan still holds, its writes and its commit
// (createAhead). Each check calls narrator_expect, which fails the
// transaction when it does not hold: it locks the accounts as readGroup
// does and compares their usage, looks the external IDs up, checks the API
// keys and reads the queue's head. When one fails, nothing is written;
// the group rolls back and runs the long way, from what it reads. A miss
// costs a round trip, so after one the store runs a growing number of
// groups the long way before it plans ahead again.

// The IDs drawn ahead. nextval's draws are never rolled back, and those a
// store holds when it closes are never used: gaps in the IDs, as a failed
// insert leaves. A store draws idsChunk at a time, when it holds fewer
// than idsLow, so that a group of up to idsLow creates can plan ahead.
const (
	idsLow   = 32
	idsChunk = 64
)

// maxAheadSkip caps the groups a store runs the long way after a miss.
const maxAheadSkip = 64

// ahead is what a store's last group of creates left, for the next to plan
// against. Only the group that leads uses it, and one group leads at a
// time (sqlstore.Group).
type ahead struct {
	// on is not Options.NoPlanAhead. When it is off, the store keeps
	// nothing.
	on bool
	// byProject is each project of the last group and its account's
	// usage as that group left it; projects of one account share a value.
	byProject map[int64]*sqlstore.GroupAccount
	head      int64
	// ids are audio IDs drawn ahead, in the order drawn.
	ids []int64
	// skip is how many groups run the long way before the next plans
	// ahead; misses how many plans ahead in a row missed.
	skip, misses int
}

// remember keeps what the committed group g left: the accounts it read
// (byProject), with its changes to their usage, and the head it planned
// against.
func (a *ahead) remember(byProject map[int64]*sqlstore.GroupAccount, g *plannedGroup, head int64) {
	if !a.on {
		return
	}
	// planGroup copies what it is given, so the accounts kept are the
	// group's own: its plan's copy of each account it changed, the
	// account as read otherwise.
	a.byProject = make(map[int64]*sqlstore.GroupAccount, len(byProject))
	for projectID, read := range byProject {
		if planned := g.planned[read]; planned != nil {
			read = planned
		}
		a.byProject[projectID] = read
	}
	a.head = head
}

// missed records a plan ahead that no longer held, whose IDs, ids, were
// not used: the next groups run the long way, more of them after each
// miss in a row.
func (a *ahead) missed(ids []int64) {
	a.ids = append(ids, a.ids...)
	a.misses++
	a.skip = min(1<<min(a.misses, 7)-1, maxAheadSkip)
}

// draw sets *ids, as b's results are read, to n IDs for a group's new
// audios: those drawn ahead first, then new ones drawn in b. If that
// leaves fewer than idsLow drawn ahead, and a is on, b draws idsChunk
// more.
func (a *ahead) draw(b *pgx.Batch, n int, ids *[]int64) {
	k := min(n, len(a.ids))
	*ids = append(make([]int64, 0, n), a.ids[:k]...)
	a.ids = a.ids[k:]
	more := n - k
	if a.on && len(a.ids) < idsLow {
		more += idsChunk
	}
	if more == 0 {
		return
	}
	b.Queue(nextAudioIDsSQL, more).Query(func(rows pgx.Rows) error {
		var id int64
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			if len(*ids) < n {
				*ids = append(*ids, id)
			} else {
				a.ids = append(a.ids, id)
			}
			return nil
		})
		return err
	})
}

// markRepeats marks to run alone each create whose external ID repeats one
// earlier in batch: it finds the audio the earlier one creates, once the
// group is committed.
func markRepeats(batch []*sqlstore.CreateCall) {
	seen := map[externalKey]bool{}
	for _, c := range batch {
		if c.Audio.ExternalID == "" {
			continue
		}
		k := externalKey{c.Audio.ProjectID, c.Audio.ExternalID}
		if seen[k] {
			c.Alone = true
		}
		seen[k] = true
	}
}

// groupProjects returns the projects of batch's creates, each once.
func groupProjects(batch []*sqlstore.CreateCall) []int64 {
	var projects []int64
	for _, c := range batch {
		if !slices.Contains(projects, c.Audio.ProjectID) {
			projects = append(projects, c.Audio.ProjectID)
		}
	}
	return projects
}

// expectSQL locks the accounts of the projects $1, in the order of the
// accounts' IDs, as groupAccountsSQL does, and fails the transaction
// (narrator_expect) unless each project exists and its account is $2,
// with the usage $3 (queued), $4 (media_bytes) and $5 (synthesis_round);
// or if a live audio holds one of the pairs of a project ($6) and an
// external ID ($7) (liveExternalID); or if one of the pairs of a project
// ($8) and an API key's hash ($9) is unauthorized. The unique index on
// external IDs would fail the insert of one a live audio holds, but only
// after waiting for any write that holds it, which may itself wait for
// these accounts: the lookup reads instead, and never waits.
const expectSQL = `
SELECT narrator_expect(
	(SELECT count(*) = cardinality($1::bigint[]) AND coalesce(bool_and(l.ok), false)
	FROM (
		SELECT (ac.id, ac.queued::bigint, ac.media_bytes::bigint, ac.synthesis_round::bigint) =
			(e.account_id, e.queued, e.media_bytes, e.synthesis_round) AS ok
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
			AS e(project_id, account_id, queued, media_bytes, synthesis_round)
		JOIN projects p ON p.id = e.project_id
		JOIN accounts ac ON ac.id = p.account_id
		ORDER BY ac.id
		FOR UPDATE OF ac) l)
	AND NOT EXISTS (SELECT FROM unnest($6::bigint[], $7::text[]) AS r(project_id, external_id) WHERE ` + liveExternalID + `)
	AND NOT EXISTS (SELECT FROM unnest($8::bigint[], $9::bytea[]) AS r(project_id, hash) WHERE ` + unauthorized + `))`

// How a group of creates ran, as GroupRecorder labels it.
const (
	planAhead  = "ahead"
	planMissed = "ahead_missed"
	planRead   = "read"
)

// recordGroup tells Options.Groups, if any, how a group ran.
func (s *Store) recordGroup(plan string) {
	if s.groups != nil {
		s.groups.CreateGroup(plan)
	}
}

// createAhead runs batch, a group of creates, in one round trip, planned
// ahead against what the last group left, if it can. It returns planAhead
// if it has set the outcome of each create not marked alone, or the
// commit failed them. Otherwise, having written nothing, it returns
// planMissed when the plan no longer held, and planRead when it could not
// plan ahead, for the group to run the long way.
func (s *Store) createAhead(ctx context.Context, conn *pgx.Conn, batch []*sqlstore.CreateCall) string {
	a := &s.ahead
	live, projects, g := s.planAheadOf(batch)
	if g == nil {
		return planRead
	}
	ids := a.ids[:len(live)]
	a.ids = a.ids[len(live):]
	made := make([]*narrator.Audio, len(live))
	for k := range live {
		made[k] = g.got[k]
		made[k].ID = ids[k]
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(genericPlansSQL)
	// Drawn before the checks, so that its rows are read even when one
	// fails.
	var none []int64
	a.draw(b, 0, &none)
	a.queueExpect(b, projects, live)
	s.jobs.QueueExpectSynthesisHead(b, a.head)
	var steps []narrator.EffectStep
	switch err := s.writeGroup(ctx, conn, g, made, b, func(step narrator.EffectStep) { steps = append(steps, step) }); {
	case err == nil:
		for _, step := range steps {
			s.traceEffect(step)
		}
		for k, c := range live {
			*c.Audio, c.Created = *g.got[k], true
		}
		a.committed(projects, g)
		s.analyzeNew(len(made))
		return planAhead
	case conn.PgConn().TxStatus() == 'E':
		// A check failed, or a write did: nothing was written.
		endGroup(ctx, conn)
		a.missed(ids)
		for _, c := range live {
			c.Err = nil
		}
		return planMissed
	default:
		// The commit failed, or the connection did: none is known to be
		// committed.
		endGroup(ctx, conn)
		for _, c := range live {
			c.Fail(unavailable(err))
		}
		return planAhead
	}
}

// planAheadOf plans the creates of batch not marked alone (live), of the
// projects given, against what the last group left. It returns a nil plan
// when the group cannot plan ahead: the store keeps nothing, or skips
// groups after a miss, or holds too few IDs drawn ahead, or the last group
// did not read one of these projects, or a create would fail or run alone,
// which the long way reads.
func (s *Store) planAheadOf(batch []*sqlstore.CreateCall) (live []*sqlstore.CreateCall, projects []int64, g *plannedGroup) {
	a := &s.ahead
	if !a.on {
		return nil, nil, nil
	}
	for _, c := range batch {
		if !c.Alone {
			live = append(live, c)
		}
	}
	if a.skip > 0 {
		a.skip--
		return nil, nil, nil
	}
	if a.byProject == nil || len(live) == 0 || len(live) > len(a.ids) {
		return nil, nil, nil
	}
	projects = groupProjects(live)
	for _, p := range projects {
		if a.byProject[p] == nil {
			return nil, nil, nil
		}
	}
	g = s.planGroup(live, a.byProject, a.head, s.now())
	if len(g.made) < len(live) {
		for _, c := range live {
			c.Err, c.Alone = nil, false
		}
		return nil, nil, nil
	}
	return live, projects, g
}

// queueExpect queues in b the check that the plan ahead of live, the
// creates of projects, still holds (expectSQL): each project's account
// and its usage as the last group left them, no live audio with one of
// their external IDs, and their API keys good.
func (a *ahead) queueExpect(b *pgx.Batch, projects []int64, live []*sqlstore.CreateCall) {
	var e struct {
		accounts, queued, bytes, rounds []int64
		probed, keyed                   []int64
		externalIDs                     []string
		hashes                          [][]byte
	}
	for _, p := range projects {
		acct := a.byProject[p]
		e.accounts = append(e.accounts, acct.ID)
		e.queued = append(e.queued, int64(acct.Usage.Queued))
		e.bytes = append(e.bytes, acct.Usage.MediaBytes)
		e.rounds = append(e.rounds, acct.Usage.NextRound)
	}
	// Each pair of a project and a key once: a group's creates mostly
	// share both.
	type pair struct {
		projectID int64
		hash      string
	}
	keyed := map[pair]bool{}
	for _, c := range live {
		if c.Audio.ExternalID != "" {
			e.probed = append(e.probed, c.Audio.ProjectID)
			e.externalIDs = append(e.externalIDs, c.Audio.ExternalID)
		}
		k := pair{c.Audio.ProjectID, string(c.KeyHash)}
		if c.KeyHash != nil && !keyed[k] {
			keyed[k] = true
			e.keyed = append(e.keyed, c.Audio.ProjectID)
			e.hashes = append(e.hashes, c.KeyHash)
		}
	}
	b.Queue(expectSQL, projects, e.accounts, e.queued, e.bytes, e.rounds, e.probed, e.externalIDs, e.keyed, e.hashes)
}

// committed records a plan ahead, of the group g of projects, that was
// committed: the next group plans against what g left.
func (a *ahead) committed(projects []int64, g *plannedGroup) {
	byProject := make(map[int64]*sqlstore.GroupAccount, len(projects))
	for _, p := range projects {
		byProject[p] = a.byProject[p]
	}
	a.remember(byProject, g, a.head)
	a.misses = 0
}
