package storetest

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/narrator/narrator"
)

// CreatePath is one way a store runs its creates: the reference create
// (sqlstore.CreateAudio, a store opened with NoGroupCommit) or one of the
// fast paths (a group commit, PostgreSQL's plan ahead).
type CreatePath struct {
	Name string
	// Open returns a new, migrated, empty store that creates this way, as
	// NewStoreFunc describes, and a function that reads its tables.
	Open func(t *testing.T, now func() time.Time, rec *Recorder) (Store, TablesFunc)
}

// TablesFunc returns every table of a store's schema but the queue's and
// the migrations', by name, each row a map of column to value as text
// ("NULL" for NULL). A value's text need only be the same for the same
// value in one store.
type TablesFunc func(t *testing.T) map[string][]map[string]string

// RunCreatePaths runs one script of creates (createScript) on a new store
// for each path, and fails unless every fast path ends as the reference
// does: the same outcome of each call (created, error code and message),
// the same rows in every table, and the same jobs. It compares whole
// tables, so an effect that one path has and the other has not shows up
// as a diff, whatever table it writes.
//
// Rows are compared by what they hold, not by their IDs, which a path may
// draw in another order or with gaps (normalizeTables); times are the
// suite's clock's and compared as they are. Columns random by design
// (randomColumns) are left out.
func RunCreatePaths(t *testing.T, reference CreatePath, fast ...CreatePath) {
	if len(fast) == 0 {
		t.Fatal("RunCreatePaths: no fast path to compare")
	}
	want := runCreateScript(t, reference)
	for _, p := range fast {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			got := runCreateScript(t, p)
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("creates through %s differ from the reference (%s) (-want +got):\n%s", p.Name, reference.Name, diff)
			}
		})
	}
}

// createRun is what a script of creates left: each call's outcome, the
// tables and the jobs, normalised.
type createRun struct {
	Outcomes []string
	Tables   map[string][]string
	Jobs     []string
	Rounds   []int64
}

// createScript is the suite's script of creates, which every path runs.
type createScript struct {
	t     *testing.T
	s     Store
	clock *Clock
	out   []string
}

// do runs one create and records its outcome under name, then moves the
// clock on.
func (sc *createScript) do(name string, keyHash []byte, a *narrator.Audio) {
	var (
		created bool
		err     error
	)
	if keyHash != nil {
		created, err = sc.s.CreateAudioWithKey(sc.t.Context(), keyHash, a)
	} else {
		created, err = sc.s.CreateAudio(sc.t.Context(), a)
	}
	sc.clock.Advance(time.Second)
	sc.out = append(sc.out, outcome(name, created, err))
}

// together runs n creates at once, the i-th made by create, and records
// their outcomes under name, sorted: which create of a race wins may
// differ, not what they come to.
func (sc *createScript) together(name string, n int, create func(i int) (keyHash []byte, a *narrator.Audio)) {
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var (
				created bool
				err     error
			)
			switch hash, a := create(i); {
			case hash != nil:
				created, err = sc.s.CreateAudioWithKey(sc.t.Context(), hash, a)
			default:
				created, err = sc.s.CreateAudio(sc.t.Context(), a)
			}
			outs[i] = outcome(name, created, err)
		})
	}
	wg.Wait()
	sc.clock.Advance(time.Second)
	slices.Sort(outs)
	sc.out = append(sc.out, outs...)
}

// outcome formats the outcome of a create.
func outcome(name string, created bool, err error) string {
	if err != nil {
		return fmt.Sprintf("%s: %s %s", name, narrator.ErrorCode(err), narrator.ErrorMessage(err))
	}
	return fmt.Sprintf("%s: created=%t", name, created)
}

// runCreateScript runs the script on a new store of path and returns what
// it left. The script covers: creates with and without an external ID and
// an API key; a create of an external ID a live audio holds (an update,
// with its supersede and its webhook delivery), and one that changes
// nothing; a project whose new audios wait as drafts; a bad key, another
// account's key, an unknown project, an invalid audio; an account filled
// to its queue's limit by concurrent creates, then refused.
func runCreateScript(t *testing.T, path CreatePath) createRun {
	rec, clock := &Recorder{}, NewClock(epoch)
	s, tables := path.Open(t, clock.Now, rec)
	ctx := t.Context()
	sc := &createScript{t: t, s: s, clock: clock}
	acct, other := mustAccount(t, s, "Acme"), mustAccount(t, s, "Other")
	keyA, keyB := hashOf("key-a"), hashOf("key-b")
	for _, k := range []struct {
		id   int64
		hash []byte
	}{{acct.ID, keyA}, {other.ID, keyB}} {
		if _, err := s.CreateAPIKey(ctx, k.id, k.hash, "pref"); err != nil {
			t.Fatal(err)
		}
	}
	p, drafts := mustProjectOf(t, s, acct.ID), mustProjectOf(t, s, acct.ID)
	mustWebhook(t, s, p.ID)
	if err := s.SetProjectAccess(ctx, &narrator.ProjectAccess{ProjectID: drafts.ID, Mode: narrator.AccessPublic, DraftNewAudios: true}); err != nil {
		t.Fatal(err)
	}
	sc.do("plain", nil, newAudio(p.ID, ""))
	sc.do("with key", keyA, newAudio(p.ID, "k-1"))
	sc.do("external ID", nil, newAudio(p.ID, "x-1"))
	again := newAudio(p.ID, "x-1")
	again.Body = "Another body."
	sc.do("external ID again, changed", nil, again)
	same := newAudio(p.ID, "x-1")
	same.Body = again.Body
	sc.do("external ID again, unchanged", keyA, same)
	sc.do("draft", keyA, newAudio(drafts.ID, "d-1"))
	sc.together("same external ID at once", 4, func(int) ([]byte, *narrator.Audio) { return keyA, newAudio(p.ID, "dup-1") })
	sc.do("bad key", hashOf("nope"), newAudio(p.ID, "bad-1"))
	sc.do("other account's key", keyB, newAudio(p.ID, "bad-2"))
	sc.do("unknown project", nil, newAudio(999999, "bad-3"))
	sc.do("unknown project with key", keyA, newAudio(999999, "bad-4"))
	long := newAudio(p.ID, "bad-5")
	long.Title = strings.Repeat("t", narrator.MaxTitleChars+1)
	sc.do("too long", keyA, long)
	sc.do("too long, with a bad key", hashOf("nope"), long)
	full := sc.fill(other.ID, SuiteLimits.MaxQueued)
	sc.do("over the queue's limit", keyB, newAudio(full.ID, "full-1"))
	update := newAudio(full.ID, "fill-0-0")
	update.Title = "Changed when the queue is full"
	sc.do("over the limit, an update", nil, update)
	run := createRun{Outcomes: sc.out, Rounds: rec.Rounds()}
	slices.Sort(run.Rounds)
	run.Tables, run.Jobs = normalizeTables(tables(t), recordedJobs(rec))
	return run
}

// fill creates n audios in projects of an account, in rounds of concurrent
// creates, each create of a round in a project of its own, so that every
// path makes the same rows, whatever order a round's creates take. Those
// of the last round that is not whole are created one by one. It returns
// the project of the first create of each round.
func (sc *createScript) fill(accountID int64, n int) *narrator.Project {
	const width = 8
	projects := make([]*narrator.Project, width)
	for i := range projects {
		projects[i] = mustProjectOf(sc.t, sc.s, accountID)
	}
	for round := 0; round*width < n; round++ {
		k := min(width, n-round*width)
		create := func(i int) ([]byte, *narrator.Audio) {
			a := newAudio(projects[i].ID, fmt.Sprintf("fill-%d-%d", round, i))
			a.Title = fmt.Sprintf("Fill %d of round %d", i, round)
			return hashOf("key-b"), a
		}
		if k == width {
			sc.together(fmt.Sprintf("fill round %d", round), k, create)
			continue
		}
		for i := range k {
			hash, a := create(i)
			sc.do(fmt.Sprintf("fill round %d, %d", round, i), hash, a)
		}
	}
	return projects[0]
}

// recordedJobs returns the jobs rec recorded, a line each, their IDs as
// key=value for normalizeTables to rename.
func recordedJobs(rec *Recorder) []string {
	var jobs []string
	for _, c := range rec.Synthesized() {
		jobs = append(jobs, fmt.Sprintf("synthesize audio=%d revision=%d", c.AudioID, c.Revision))
	}
	for _, keys := range rec.DeletedMedia() {
		jobs = append(jobs, "delete_media "+strings.Join(keys, ","))
	}
	for _, id := range rec.Delivered() {
		jobs = append(jobs, fmt.Sprintf("webhook delivery=%d", id))
	}
	for _, id := range rec.Superseded() {
		jobs = append(jobs, fmt.Sprintf("supersede audio=%d", id))
	}
	return jobs
}

// BytesText returns a value of bytes as TablesFunc gives it: as text if
// it is UTF-8 (a delivery's body, whose IDs normalizeTables renames), in
// hex otherwise.
func BytesText(v []byte) string {
	if utf8.Valid(v) {
		return string(v)
	}
	return hex.EncodeToString(v)
}

// randomColumns are columns whose values are random by design: a webhook's
// signing secret, a delivery's message ID.
var randomColumns = []string{"secret", "message_id"}

// idRef is a column, or a key=value pair in text, that holds an ID.
var idRef = regexp.MustCompile(`\b([a-z]+)=(\d+)\b`)

// normalizeTables returns tables, and jobs, with every ID replaced by a
// name that does not depend on the order IDs were drawn in: "table#k",
// the k-th row of the table ordered by what it holds besides IDs. A
// column "id" is its table's; a column "x_id" (but external_id) names a
// row of the table "xs", "xes", "x…ies" or one whose name ends so (linked);
// so does "x=N" in a value or a job. Parents are named before children,
// so that the content of a row holds its parents' names. Each table's rows
// are sorted, and so are the jobs.
func normalizeTables(tables map[string][]map[string]string, jobs []string) (map[string][]string, []string) {
	n := &normalizer{tables: tables, names: map[string]map[string]string{}}
	out := map[string][]string{}
	pending := slices.Sorted(maps.Keys(tables))
	for len(pending) > 0 {
		// A table whose parents are named; any, if none is (a cycle).
		next := 0
		for i, table := range pending {
			if parentsNamed(tables, table, n.names) {
				next = i
				break
			}
		}
		table := pending[next]
		pending = slices.Delete(pending, next, next+1)
		out[table] = n.nameTable(table)
	}
	var normal []string
	for _, j := range jobs {
		normal = append(normal, n.rewrite(j))
	}
	slices.Sort(normal)
	return out, normal
}

// normalizer names the rows of tables (normalizeTables).
type normalizer struct {
	tables map[string][]map[string]string
	// names maps each table named so far, and each raw ID of its rows, to
	// the row's name.
	names map[string]map[string]string
}

// rename returns the name of the row raw of table, or raw if it has none.
func (n *normalizer) rename(table, raw string) string {
	if name, ok := n.names[table][raw]; ok {
		return name
	}
	return raw
}

// rewrite renames the IDs of "x=N" pairs in v.
func (n *normalizer) rewrite(v string) string {
	return idRef.ReplaceAllStringFunc(v, func(m string) string {
		kv := idRef.FindStringSubmatch(m)
		if target := linked(n.tables, kv[1]); target != "" {
			return kv[1] + "=" + n.rename(target, kv[2])
		}
		return m
	})
}

// content returns what a row holds besides its own ID and its
// random columns, its parents' IDs renamed, one "column=value " each, in
// the order of the columns' names.
func (n *normalizer) content(row map[string]string) string {
	var b strings.Builder
	for _, col := range slices.Sorted(maps.Keys(row)) {
		v := row[col]
		switch {
		case col == "id" || slices.Contains(randomColumns, col):
			continue
		case strings.HasSuffix(col, "_id") && col != "external_id":
			if target := linked(n.tables, strings.TrimSuffix(col, "_id")); target != "" {
				v = n.rename(target, v)
			}
		default:
			v = n.rewrite(v)
		}
		fmt.Fprintf(&b, "%s=%s ", col, v)
	}
	return b.String()
}

// nameTable names the rows of table, in the order of their content (their
// raw IDs for rows alike), and returns them, a line each.
func (n *normalizer) nameTable(table string) []string {
	rows := slices.Clone(n.tables[table])
	slices.SortStableFunc(rows, func(a, b map[string]string) int {
		if c := strings.Compare(n.content(a), n.content(b)); c != 0 {
			return c
		}
		x, _ := strconv.ParseInt(a["id"], 10, 64)
		y, _ := strconv.ParseInt(b["id"], 10, 64)
		return cmp.Compare(x, y)
	})
	n.names[table] = map[string]string{}
	for k, r := range rows {
		if id, ok := r["id"]; ok {
			n.names[table][id] = fmt.Sprintf("%s#%d", table, k+1)
		}
	}
	var lines []string
	for _, r := range rows {
		line := n.content(r)
		if id, ok := r["id"]; ok {
			line = "id=" + n.names[table][id] + " " + line
		}
		lines = append(lines, line)
	}
	return lines
}

// linked returns the table that a column x_id, or a pair x=N, names: "xs",
// "xes", or for x ending in y "…ies", or a table whose name ends in "_"
// and one of those; "" if there is none.
func linked(tables map[string][]map[string]string, x string) string {
	plurals := []string{x + "s", x + "es"}
	if y, ok := strings.CutSuffix(x, "y"); ok {
		plurals = append(plurals, y+"ies")
	}
	for _, p := range plurals {
		if _, ok := tables[p]; ok {
			return p
		}
	}
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		for _, p := range plurals {
			if strings.HasSuffix(table, "_"+p) {
				return table
			}
		}
	}
	return ""
}

// parentsNamed tells whether every table that table's columns name (other
// than itself) has its rows named.
func parentsNamed(tables map[string][]map[string]string, table string, names map[string]map[string]string) bool {
	for _, r := range tables[table] {
		for col := range r {
			if !strings.HasSuffix(col, "_id") || col == "external_id" {
				continue
			}
			target := linked(tables, strings.TrimSuffix(col, "_id"))
			if target != "" && target != table && names[target] == nil {
				return false
			}
		}
		return true
	}
	return true
}
