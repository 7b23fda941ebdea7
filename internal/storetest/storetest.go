// Package storetest is the conformance suite of Narrator's stores. The
// sqlite and postgres tests run it: Run with a new store for each test, and
// RunDatabase with new databases for what spans stores and transactions.
//
// A store enqueues jobs inside its own transactions, with a transaction type
// of its own, so the suite cannot hand it a fake job inserter. Instead the
// store's test wires a small adapter from its JobInserter interface to the
// Recorder that Run passes in (Recorder.Record), and the suite inspects the
// Recorder.
package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narrator/narrator"
)

// Store is the behaviour every store must have. Each method's contract is
// documented on the method of sqlstore.Store (or, for a method a store
// keeps of its own, on that store's); the suite is its executable form.
type Store interface {
	CreateAccount(ctx context.Context, a *narrator.Account) error
	FindAccount(ctx context.Context, id int64) (*narrator.Account, error)
	CreateAPIKey(ctx context.Context, accountID int64, hash []byte, prefix string) (*narrator.APIKey, error)
	ListAPIKeys(ctx context.Context, accountID int64) ([]*narrator.APIKey, error)
	RevokeAPIKey(ctx context.Context, accountID, keyID int64) error
	AuthenticateAPIKey(ctx context.Context, hash []byte) (int64, error)
	AuthorizeProject(ctx context.Context, hash []byte, projectID int64) (*narrator.Project, error)

	CreateProject(ctx context.Context, p *narrator.Project) error
	FindProject(ctx context.Context, accountID, projectID int64) (*narrator.Project, error)
	ListProjects(ctx context.Context, accountID int64) ([]*narrator.Project, error)
	SetSpeechRate(ctx context.Context, projectID int64, rate float64) (*narrator.Project, error)
	SetClip(ctx context.Context, c *narrator.Clip) error
	Clip(ctx context.Context, projectID int64, kind narrator.ClipKind) (*narrator.Clip, error)
	RemoveClip(ctx context.Context, projectID int64, kind narrator.ClipKind) error

	AudioPublication(ctx context.Context, audioID int64) (narrator.Publication, error)
	SetPublication(ctx context.Context, p narrator.Publication) (narrator.Publication, error)
	ProjectAccess(ctx context.Context, projectID int64) (narrator.ProjectAccess, error)
	SetProjectAccess(ctx context.Context, a *narrator.ProjectAccess) error
	RotateEmbedSecret(ctx context.Context, projectID int64, secret string) (narrator.ProjectAccess, error)
	MediaAccess(ctx context.Context, folder string) (narrator.ProjectAccess, error)

	CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error)
	CreateAudioWithKey(ctx context.Context, hash []byte, a *narrator.Audio) (created bool, err error)
	FindAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	UpdateAudio(ctx context.Context, projectID int64, ref string, u narrator.AudioUpdate) (*narrator.Audio, error)
	DeleteAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	ListAudios(ctx context.Context, projectID int64, since time.Time, page, perPage int) ([]*narrator.Audio, error)

	AudioForSynthesis(ctx context.Context, audioID int64) (*narrator.Audio, *narrator.Project, error)
	FinishAudio(ctx context.Context, audioID int64, revision int, r narrator.Rendering) error
	FailAudio(ctx context.Context, audioID int64, revision int, message string) error
	ResynthesizeAudio(ctx context.Context, projectID int64, ref string) (*narrator.Audio, error)
	AccountUsage(ctx context.Context, accountID int64) (narrator.Usage, error)

	LeaseSynthesis(ctx context.Context, audioID int64, revision int, holder string, until time.Time) (bool, error)
	RequeueSynthesis(ctx context.Context, audioID int64, revision int, after time.Time) (bool, error)
	ReleaseSynthesis(ctx context.Context, audioID int64, holder string) error
	ReleaseSynthesisLeases(ctx context.Context) error
	ReportSynthesis(ctx context.Context, audioID int64, holder string, p narrator.SynthesisProgress) (bool, error)
	SynthesisProgress(ctx context.Context, audioID int64, revision int) (narrator.SynthesisProgress, error)

	ReserveSignInAttempt(ctx context.Context, attempt string, limits []narrator.SignInLimit, at time.Time) (*narrator.SignInRefusal, error)
	ClearSignInAttempts(ctx context.Context, attempt string, keys []string) error

	SetPronunciation(ctx context.Context, p *narrator.Pronunciation) error
	ListPronunciations(ctx context.Context, projectID int64) ([]*narrator.Pronunciation, error)
	RemovePronunciation(ctx context.Context, projectID, id int64) (*narrator.Pronunciation, error)
	ResynthesisCandidates(ctx context.Context, job narrator.ResynthesisJob) ([]int64, error)
	ResynthesizeAudios(ctx context.Context, job narrator.ResynthesisJob, ids []int64) (int, error)

	SearchAudios(ctx context.Context, projectID int64, query string, since time.Time, page, perPage int) ([]*narrator.Audio, int, error)
	FindAudiosByID(ctx context.Context, projectID int64, ids []int64) ([]*narrator.Audio, error)

	CreateUser(ctx context.Context, u *narrator.User) error
	FindUserByEmail(ctx context.Context, email string) (*narrator.User, error)
	SetUserPassword(ctx context.Context, userID int64, passwordHash []byte) error
	CreateSession(ctx context.Context, sess *narrator.Session, tokenHash []byte) error
	FindSession(ctx context.Context, tokenHash []byte) (*narrator.Session, error)
	DeleteSession(ctx context.Context, tokenHash []byte) error

	ExportMeta(ctx context.Context) (*narrator.Export, error)
	ImportMeta(ctx context.Context, e *narrator.Export) error
	ExportAudios(ctx context.Context, afterID int64, limit int) ([]*narrator.Audio, error)
	ImportAudios(ctx context.Context, audios []*narrator.Audio) (inserted int, err error)

	FindFeed(ctx context.Context, projectID int64) (*narrator.Feed, error)
	SaveFeed(ctx context.Context, f *narrator.Feed) error
	RotateFeedToken(ctx context.Context, projectID int64, token string) (*narrator.Feed, error)
	FeedByToken(ctx context.Context, token string, limit int) (*narrator.FeedContent, error)
	CreateWebhook(ctx context.Context, h *narrator.Webhook) error
	ListWebhooks(ctx context.Context, projectID int64) ([]*narrator.Webhook, error)
	FindWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error)
	DeleteWebhook(ctx context.Context, projectID, id int64) error
	RotateWebhookSecret(ctx context.Context, projectID, id int64, secret string) (*narrator.Webhook, error)
	EnableWebhook(ctx context.Context, projectID, id int64) (*narrator.Webhook, error)
	TestWebhook(ctx context.Context, projectID, id int64) (*narrator.WebhookDelivery, error)
	ListDeliveries(ctx context.Context, projectID, webhookID int64, limit int) ([]*narrator.WebhookDelivery, error)
	ResendDelivery(ctx context.Context, projectID, webhookID, deliveryID int64) (*narrator.WebhookDelivery, error)
	DeliveryForAttempt(ctx context.Context, deliveryID int64) (*narrator.WebhookDelivery, *narrator.Webhook, error)
	RecordAttempt(ctx context.Context, deliveryID int64, a narrator.WebhookAttempt) (narrator.AttemptPlan, error)

	FindAudioByExternalID(ctx context.Context, projectID int64, externalID string) (*narrator.Audio, error)
	FindAudioByArticleURL(ctx context.Context, projectID int64, articleURL string) (*narrator.Audio, error)
	RecordListens(ctx context.Context, tallies []narrator.ListenTally) error
	AudioListens(ctx context.Context, audioID int64) (narrator.ListenCounts, error)
	ProjectListens(ctx context.Context, projectID int64, since time.Time) (*narrator.ProjectListens, error)

	CreateSource(ctx context.Context, src *narrator.Source) error
	Source(ctx context.Context, id int64) (*narrator.Source, error)
	// FindSource returns ENOTFOUND for a feed of another project.
	FindSource(ctx context.Context, projectID, id int64) (*narrator.Source, error)
	ListSources(ctx context.Context, projectID int64) ([]*narrator.Source, error)
	DeleteSource(ctx context.Context, projectID, id int64) error
	SeenItems(ctx context.Context, sourceID int64, externalIDs []string) (map[string]narrator.SeenItem, error)
	ClaimSource(ctx context.Context, id int64, until time.Time) (bool, error)
	ClaimDueSource(ctx context.Context, id int64, until time.Time) (bool, error)
	DueSources(ctx context.Context, limit int) ([]int64, error)
	RecordRead(ctx context.Context, r narrator.SourceRead) error
	SetSubscription(ctx context.Context, id int64, sub narrator.Subscription) error

	InstallVoice(ctx context.Context, v *narrator.InstalledVoice) error
	ListInstalledVoices(ctx context.Context) ([]*narrator.InstalledVoice, error)
	RemoveVoice(ctx context.Context, id string) (*narrator.InstalledVoice, error)
}

// SchemaStore is a Store with what a process does with it besides reading
// and writing: migrating its schema, checking it, and closing it.
type SchemaStore interface {
	Store
	Migrate(ctx context.Context) error
	SchemaCurrent(ctx context.Context) (bool, error)
	// Ping checks that the database answers a query; it fails on a
	// closed store. Readiness checks call it.
	Ping(ctx context.Context) error
	Close() error
}

// SuiteLimits are the per-account limits of every store the suite runs
// (NewStoreFunc): above what the other tests hold, low enough for the
// quota tests to reach.
var SuiteLimits = narrator.Limits{MaxQueued: 100, MaxMediaBytes: 1 << 30, MaxSources: narrator.MaxSourcesPerProject + 5}

// NewStoreFunc returns a new, migrated, empty store for one test. The store
// must use now as its clock and SuiteLimits as its limits, pass every job
// it enqueues to rec, returning rec's error so that a failing enqueue rolls
// the store's transaction back, answer for the head of the synthesis queue
// with rec.SynthesisHead, render webhook deliveries with rec.EventBody, and
// tell rec.Effect of each step of a write's effects (narrator.EffectStep) as
// it takes it, and ping feeds' hubs if rec.FeedPings. It should register its
// cleanup with t.Cleanup.
type NewStoreFunc func(t *testing.T, now func() time.Time, rec *Recorder) Store

// SynthesizeCall is one recorded synthesis job.
type SynthesizeCall struct {
	AudioID  int64
	Revision int
}

// Recorder records the jobs a store enqueues. Calls are recorded as they are
// made, inside the store's transaction, whether or not it later commits.
type Recorder struct {
	mu         sync.Mutex
	synthesize []SynthesizeCall
	rounds     []int64
	head       int64
	deletes    [][]string
	webhooks   []int64
	superseded []int64
	withdrawn  []int64
	pings      []narrator.FeedPingJob
	// noPings makes FeedPings false: the store pings no hub.
	noPings bool
	// steps are the effect steps, jobs and renderings in the order they
	// came (Steps).
	steps []string
	err   error
}

// Record records a job and returns the error set by FailWith. A failed
// call is not recorded; an unknown kind of job is an error.
func (r *Recorder) Record(job narrator.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.steps = append(r.steps, "job "+job.JobKind())
	switch j := job.(type) {
	case narrator.SynthesizeJob:
		r.synthesize = append(r.synthesize, SynthesizeCall{AudioID: j.AudioID, Revision: j.Revision})
		r.rounds = append(r.rounds, j.Round)
	case narrator.DeleteMediaJob:
		r.deletes = append(r.deletes, slices.Clone(j.Keys))
	case narrator.WebhookJob:
		r.webhooks = append(r.webhooks, j.DeliveryID)
	case narrator.FeedPingJob:
		r.pings = append(r.pings, j)
	default:
		return fmt.Errorf("storetest: unknown job %T", job)
	}
	return nil
}

// Supersede records that the store removed an audio's waiting synthesis
// jobs (narrator.Effects.Supersede); a store's adapter calls it for the
// JobInserter's SupersedeSynthesis. It returns the error set by FailWith.
func (r *Recorder) Supersede(audioID int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.steps = append(r.steps, "supersede")
	r.superseded = append(r.superseded, audioID)
	return nil
}

// RemoveDeliveryJobs records that the store removed the waiting webhook
// jobs of the deliveries ids, given up before their attempt; a store's
// adapter calls it for the JobInserter's method of that name. It returns
// the error set by FailWith.
func (r *Recorder) RemoveDeliveryJobs(ids []int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.steps = append(r.steps, "remove delivery jobs")
	r.withdrawn = append(r.withdrawn, ids...)
	return nil
}

// Withdrawn returns the deliveries whose waiting webhook jobs were
// removed, in order.
func (r *Recorder) Withdrawn() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.withdrawn)
}

// Superseded returns the audios whose waiting synthesis was removed, in
// order.
func (r *Recorder) Superseded() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.superseded)
}

// Failing returns the error set by FailWith: a store's adapter that
// records a job only once the store's statements have run (a batch's)
// checks it as the job is queued, to fail as Record would.
func (r *Recorder) Failing() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// FailWith makes later calls return err, until FailWith(nil).
func (r *Recorder) FailWith(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// Synthesized returns the recorded synthesis jobs, oldest first.
func (r *Recorder) Synthesized() []SynthesizeCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.synthesize)
}

// Rounds returns the fair rounds of the recorded synthesis jobs, oldest
// first.
func (r *Recorder) Rounds() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rounds)
}

// SynthesisHead is the round of the synthesis job a worker would take
// next, as the suite pretends it to be (SetSynthesisHead): a store's
// adapter returns it for the JobInserter's method of that name.
func (r *Recorder) SynthesisHead() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.head
}

// SetSynthesisHead sets what SynthesisHead returns.
func (r *Recorder) SetSynthesisHead(round int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.head = round
}

// DeletedMedia returns the key lists of the recorded media removal jobs,
// oldest first.
func (r *Recorder) DeletedMedia() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.deletes)
}

// Delivered returns the delivery IDs of the recorded webhook jobs, oldest
// first.
func (r *Recorder) Delivered() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.webhooks)
}

// Pings returns the recorded feed pings, oldest first.
func (r *Recorder) Pings() []narrator.FeedPingJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.pings)
}

// FeedPings tells whether the store is to ping the WebSub hubs of podcast
// feeds, as a store whose operator configured a hub does (the stores'
// Options.FeedPings): true but for the suite's store without a hub.
func (r *Recorder) FeedPings() bool { return !r.noPings }

// Effect records a step of a write's effects, as the store takes it.
func (r *Recorder) Effect(step narrator.EffectStep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, string(step))
}

// Steps returns, in the order they came, the effect steps (Effect), the
// recorded jobs ("job " and their kind), the removals of waiting jobs
// ("supersede", "remove delivery jobs") and the renderings of events
// ("render " and their type), and forgets them.
func (r *Recorder) Steps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	steps := r.steps
	r.steps = nil
	return steps
}

// EventBody renders an event as a line that the suite checks: its type,
// project, time, and for an audio event the audio's ID, state, deletion
// and media keys.
func (r *Recorder) EventBody(e *narrator.Event) ([]byte, error) {
	r.mu.Lock()
	r.steps = append(r.steps, "render "+e.Type)
	r.mu.Unlock()
	s := fmt.Sprintf("%s project=%d at=%s", e.Type, e.ProjectID, e.CreatedAt.UTC().Format(time.RFC3339Nano))
	if a := e.Audio; a != nil {
		s += fmt.Sprintf(" audio=%d state=%s deleted=%t keys=%v", a.ID, a.State, a.Deleted, a.MediaKeys())
	}
	return []byte(s), nil
}

// Clock is a manual clock for stores under test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// epoch is where each test's clock starts: a time in whole microseconds,
// so that it survives a round trip through any store.
var epoch = time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)

// bundle is what each test gets.
type bundle struct {
	store Store
	rec   *Recorder
	clock *Clock
}

// Run runs the conformance suite against stores made by newStore. Every
// subtest gets its own store and runs in parallel.
func Run(t *testing.T, newStore NewStoreFunc) {
	setup := func(t *testing.T) *bundle {
		t.Helper()
		b := &bundle{rec: &Recorder{}, clock: NewClock(epoch)}
		b.store = newStore(t, b.clock.Now, b.rec)
		return b
	}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Account", accountTests},
		{"APIKey", apiKeyTests},
		{"Project", projectTests},
		{"Audio", audioTests},
		{"Concurrent", concurrentTests},
		{"Update", updateTests},
		{"Delete", deleteTests},
		{"List", listTests},
		{"Synthesis", synthesisTests},
		{"Enqueue", enqueueTests},
		{"Pronunciation", pronunciationTests},
		{"Lease", leaseTests},
		{"Progress", progressTests},
		{"SignIn", signInTests},
		{"Search", searchTests},
		{"Resynthesize", resynthesizeTests},
		{"Resynthesis", resynthesisTests},
		{"Quota", quotaTests},
		{"User", userTests},
		{"Session", sessionTests},
		{"Time", timeTests},
		{"EmbedLookup", embedLookupTests},
		{"Listen", listenTests},
		{"Copy", copyTests(newStore)},
		{"Feed", feedTests},
		{"FeedPing", feedPingTests(newStore)},
		{"Webhook", webhookTests},
		{"WebhookEvent", webhookEventTests},
		{"WebhookDelivery", webhookDeliveryTests},
		{"WebhookPending", pendingTests},
		{"Voice", voiceTests},
		{"Effects", effectTests},
		{"Publication", publicationTests},
		{"Source", sourceTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.fn(t, setup(t))
				})
			}
		})
	}
}

// test is one named test of the suite.
type test struct {
	name string
	fn   func(t *testing.T, b *bundle)
}
