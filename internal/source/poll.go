package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/ratelimit"
	"github.com/narrator/narrator/internal/speak"
)

// Store is what a Poller needs of the store; sqlite.Store and
// postgres.Store satisfy it.
type Store interface {
	// Source returns ENOTFOUND for a feed that does not exist.
	Source(ctx context.Context, id int64) (*narrator.Source, error)
	SeenItems(ctx context.Context, sourceID int64, externalIDs []string) (map[string]narrator.SeenItem, error)
	ClaimSource(ctx context.Context, id int64, until time.Time) (bool, error)
	ClaimDueSource(ctx context.Context, id int64, until time.Time) (bool, error)
	DueSources(ctx context.Context, limit int) ([]int64, error)
	RecordRead(ctx context.Context, r narrator.SourceRead) error
	SetSubscription(ctx context.Context, id int64, sub narrator.Subscription) error
	// CreateAudio creates an audio, or updates the live audio of the same
	// external ID, re-narrating only what changed.
	CreateAudio(ctx context.Context, a *narrator.Audio) (created bool, err error)
}

// PageReader reads an article page; extract.Reader satisfies it.
type PageReader interface {
	ReadPage(ctx context.Context, rawURL string) (*narrator.Page, error)
}

// Recorder records what reads do; metrics.Metrics satisfies it.
type Recorder interface {
	SourceRead(outcome string, took time.Duration)
	SourceItems(action string, n int)
}

// Options configures a Poller.
type Options struct {
	// Client fetches the feeds (required).
	Client *fetch.Client
	// Pages reads article pages for feeds with full text; nil leaves
	// such items with the feed's own text.
	Pages PageReader
	// MaxAudio bounds an audio's estimated length, as for API creates;
	// 0 for no bound.
	MaxAudio time.Duration
	// Recorder gets the reads' metrics; nil records nothing.
	Recorder Recorder
	// Logger gets a line per failed read; discarded when nil.
	Logger *slog.Logger
	// CallbackURL returns the public URL of a feed's WebSub callback at
	// a subscription's nonce (narrator.Subscription.Nonce), which Callback
	// serves with both in its path, as {source_id} and {nonce}; nil leaves
	// feeds unsubscribed.
	CallbackURL func(feedID int64, nonce string) string
	// TempDir is where a push larger than pushMemory waits while its
	// signature is checked; os.TempDir() when "".
	TempDir string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ReadBudget bounds one read as a whole, article pages included;
	// narrator.ReadBudget when 0.
	ReadBudget time.Duration
}

// Lease is how long a node holds a feed it reads; a node that dies while
// reading releases it when it expires.
const Lease = 5 * time.Minute

// Poller reads feeds: when they are due (Run), or when asked (Poll). It is
// safe for concurrent use; the store's lease makes sure that one node at a
// time reads a feed, in a cluster too.
type Poller struct {
	store Store
	opts  Options
	// pushes limits each feed's WebSub pushes, on this node.
	pushes *ratelimit.Limiter
}

// New returns a poller of the feeds in st.
func New(st Store, opts Options) *Poller {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReadBudget <= 0 {
		// Well within the read's Lease: the items it has not reached
		// wait for the next read.
		opts.ReadBudget = narrator.ReadBudget
	}
	return &Poller{store: st, opts: opts, pushes: ratelimit.New(opts.Now)}
}

// ErrBusy is the error of Poll for a feed that another read holds.
var ErrBusy = narrator.Errorf(narrator.ECONFLICT, "the feed is being read now; try again in a moment")

// Poll reads a feed now, whenever it is due, and returns it with the state
// the read left. A read that fails records its error on the feed, which Poll
// returns as it stands: a bad feed is not an error of the caller. It returns
// ENOTFOUND if there is no such feed and ErrBusy if another read holds it.
func (p *Poller) Poll(ctx context.Context, id int64) (*narrator.Source, error) {
	ok, err := p.store.ClaimSource(ctx, id, p.opts.Now().Add(Lease))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrBusy
	}
	if err := p.read(ctx, id, nil); err != nil {
		return nil, err
	}
	return p.store.Source(ctx, id)
}

// Tick is how often Run looks for due feeds.
const Tick = 15 * time.Second

// Readers is how many feeds Run reads at once on a node. The store takes
// the due feeds for them by narrator.FairReads, so that one account's slow
// feeds hold at most narrator.MaxReadsPerAccount of them.
const Readers = 4

// Run reads due feeds until ctx ends, looking every Tick. Every node may
// run it: each feed is claimed before it is read.
func (p *Poller) Run(ctx context.Context) {
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		p.RunDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunDue reads the feeds that are due, Readers at a time, and returns when
// none is left that it may read and its reads have ended. A read that ends
// makes room for the next due feed at once, and feeds that fall due
// meanwhile are looked for every Tick: a slow read holds its own reader
// only.
func (p *Poller) RunDue(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{}, Readers)
	t := time.NewTicker(Tick)
	defer t.Stop()
	running := 0
	for ctx.Err() == nil {
		if free := Readers - running; free > 0 {
			ids, err := p.store.DueSources(ctx, free)
			if err != nil {
				p.opts.Logger.Error("find due feeds", "err", err)
			}
			for _, id := range ids {
				ok, err := p.store.ClaimDueSource(ctx, id, p.opts.Now().Add(Lease))
				if err != nil {
					p.opts.Logger.Error("claim source", "source_id", id, "err", err)
				}
				if err != nil || !ok {
					// Another node holds it, or the account has its
					// share of reads: the next look tries again.
					continue
				}
				running++
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { done <- struct{}{} }()
					if err := p.read(ctx, id, nil); err != nil {
						p.opts.Logger.Error("read source", "source_id", id, "err", err)
					}
				}()
			}
		}
		if running == 0 {
			// Nothing due, or nothing this node may claim now: the
			// next tick tries again, rather than this loop at once.
			return
		}
		select {
		case <-ctx.Done():
		case <-done:
			running--
		case <-t.C:
		}
	}
}

// read reads a claimed feed and records what it found; its error is the
// store's, not the feed's, whose errors are recorded on it. A pushed
// document (WebSub) is read instead of fetching the feed.
func (p *Poller) read(ctx context.Context, id int64, pushed *Document) error {
	src, err := p.store.Source(ctx, id)
	if err != nil {
		// The lease ends by itself; the feed is gone or unreadable.
		return err
	}
	start := p.opts.Now()
	ctx, cancel := context.WithTimeout(ctx, p.opts.ReadBudget)
	defer cancel()
	var r narrator.SourceRead
	var hub, topic string
	if pushed != nil {
		r, _ = p.parseAndNarrate(ctx, src, src.State, *pushed, true)
	} else {
		r, hub, topic = p.fetchAndNarrate(ctx, src)
	}
	r.SourceID = src.ID
	r.State.LastFetchAt = start
	if r.State.Status == narrator.SourceStatusError {
		r.State.Failures = src.State.Failures + 1
		p.opts.Logger.Warn("source read failed", "source_id", src.ID, "project_id", src.ProjectID, "reason", r.State.LastError)
	}
	r.State.NextPollAt = src.NextPoll(p.opts.Now(), r.State.Failures)
	if p.opts.Recorder != nil {
		p.opts.Recorder.SourceRead(r.State.Status, p.opts.Now().Sub(start))
	}
	// The record outlives a cancelled read: what was created is kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := p.store.RecordRead(rctx, r); err != nil {
		return err
	}
	if p.opts.CallbackURL != nil && src.State.WebSub.Subscribe(hub, topic, p.opts.Now()) {
		return p.subscribe(rctx, src, hub, topic)
	}
	return nil
}

// fetchAndNarrate fetches src, parses it, and creates or updates the
// audios of its new and changed items. The state it returns keeps the
// feed's validators unless the read replaced them, which it does only when
// it read the whole answer: a feed that failed, or whose items wait for
// the next read, is fetched whole next time, not answered 304. It also
// returns the WebSub hub and topic the feed advertises, if any.
func (p *Poller) fetchAndNarrate(ctx context.Context, src *narrator.Source) (r narrator.SourceRead, hub, topic string) {
	st := src.State
	st.LastError = ""
	header := http.Header{}
	for k, v := range src.Header {
		header.Set(k, v)
	}
	if st.ETag != "" {
		header.Set("If-None-Match", st.ETag)
	}
	if st.LastModified != "" {
		header.Set("If-Modified-Since", st.LastModified)
	}
	// The client refuses the server's own feeds (fetch.Self), so that
	// Narrator never narrates its podcast feeds into themselves.
	resp, err := p.opts.Client.Get(ctx, fetch.Request{URL: src.URL, Header: header, Types: FeedTypes, What: "feed"})
	if err != nil {
		st.Status, st.LastError = narrator.SourceStatusError, fetch.Describe(err)
		return narrator.SourceRead{State: st}, "", ""
	}
	if resp.NotModified {
		st.Status, st.Failures = narrator.SourceStatusNotModified, 0
		return narrator.SourceRead{State: st}, "", ""
	}
	r, complete := p.parseAndNarrate(ctx, src, st, Document{Body: resp.Body, Charset: resp.Charset, URL: resp.URL.String()}, false)
	if complete {
		r.State.ETag, r.State.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		if len(r.State.ETag) > 500 || !narrator.ValidText(r.State.ETag) {
			r.State.ETag = ""
		}
		if len(r.State.LastModified) > 100 || !narrator.ValidText(r.State.LastModified) {
			r.State.LastModified = ""
		}
	}
	if r.State.Status == narrator.SourceStatusOK {
		hub, topic = Discover(resp.Body, resp.Header, resp.URL.String())
	}
	return r, hub, topic
}

// parseAndNarrate parses a feed, and creates or updates the audios of its
// new and changed items; st is the state to build on, and pushed says that
// a hub pushed the feed (narrator.ItemChanged). It reports whether the read
// is complete: the feed parsed, and no item waits for the next read.
func (p *Poller) parseAndNarrate(ctx context.Context, src *narrator.Source, st narrator.SourceState, doc Document, pushed bool) (narrator.SourceRead, bool) {
	st.LastError = ""
	feed, err := Parse(doc)
	if err != nil {
		st.Status, st.LastError = narrator.SourceStatusError, err.Error()
		return narrator.SourceRead{State: st}, false
	}
	st.Status, st.Failures = narrator.SourceStatusOK, 0
	r, note, complete := p.narrate(ctx, src, feed, pushed)
	r.State = st
	r.State.LastError = note
	return r, complete
}

// narrate creates or updates the audios of feed's new and changed items,
// oldest first, at most narrator.MaxItemsPerPoll of them, and returns what
// to record. On a feed's first read, the items the backfill rule leaves
// out are recorded as seen but never narrated, and are not counted among
// those skipped. A changed item is narrated by the rule of
// narrator.ItemChanged, which holds a pushed feed to its dates. It also returns a note for the feed, in plain words: why
// items were skipped or cut, or why it stopped early; and whether it read
// every item it could, none waiting for the next read.
func (p *Poller) narrate(ctx context.Context, src *narrator.Source, feed *Feed, pushed bool) (r narrator.SourceRead, note string, complete bool) {
	fi := sortItems(src, feed)
	seen, err := p.store.SeenItems(ctx, src.ID, fi.ids)
	if err != nil {
		return r, "the feed's items could not be checked; they will be on the next read", false
	}
	var todo []*narrator.SourceAudio
	var skipped []string
	if src.State.ItemsSeen == 0 && src.State.Created == 0 && len(seen) == 0 {
		todo, skipped = p.backfill(src, feed, fi, &r)
	} else {
		todo, skipped = fi.changed(seen, pushed)
	}
	// Feeds list the newest first; audios are made oldest first.
	slices.Reverse(todo)
	var more int
	if len(todo) > narrator.MaxItemsPerPoll {
		more = len(todo) - narrator.MaxItemsPerPoll
		todo = todo[:narrator.MaxItemsPerPoll]
	}
	skipped, cut, stop := p.createAudios(ctx, src, todo, &r, skipped)
	if p.opts.Recorder != nil {
		p.opts.Recorder.SourceItems("created", int(r.Created))
		p.opts.Recorder.SourceItems("updated", int(r.Updated))
		p.opts.Recorder.SourceItems("skipped", len(skipped))
	}
	return r, readNotes(stop, skipped, more, feed.Total, cut), stop == nil && more == 0
}

// badItem is a feed item that makes no audio, and why.
type badItem struct {
	item *narrator.SourceItem
	id   string // "" for an item without a key
	why  string
}

// feedItems are a feed's items sorted for narration.
type feedItems struct {
	audios []*narrator.SourceAudio // the items that make an audio
	bads   []badItem               // the items that make none
	ids    []string                // the keys of both, each once
	byItem map[*narrator.SourceItem]*narrator.SourceAudio
}

// sortItems sorts the feed's items into those that make an audio and those that make none,
// keeping the first of the items that share a key.
func sortItems(src *narrator.Source, feed *Feed) feedItems {
	fi := feedItems{byItem: map[*narrator.SourceItem]*narrator.SourceAudio{}}
	have := map[string]bool{}
	for _, it := range feed.Items {
		id := src.ItemID(it)
		if id != "" {
			if have[id] {
				continue // a feed that repeats an item narrates it once
			}
			have[id] = true
			fi.ids = append(fi.ids, id)
		}
		x, err := src.ItemAudio(it)
		if err != nil {
			fi.bads = append(fi.bads, badItem{it, id, narrator.ErrorMessage(err)})
			continue
		}
		fi.audios = append(fi.audios, x)
		fi.byItem[it] = x
	}
	return fi
}

// backfill picks, on a source's first read, the items its backfill keeps; the others are
// recorded in r as seen, never to be narrated. It returns the items to narrate, and why the
// kept items that make no audio were skipped.
func (p *Poller) backfill(src *narrator.Source, feed *Feed, fi feedItems, r *narrator.SourceRead) (todo []*narrator.SourceAudio, skipped []string) {
	keep := map[*narrator.SourceItem]bool{}
	keepID := map[string]bool{}
	for _, it := range src.Backfill(feed.Items, p.opts.Now()) {
		keep[it] = true
		if x, ok := fi.byItem[it]; ok {
			keepID[x.Audio.ExternalID] = true
		}
	}
	for _, x := range fi.audios {
		if keepID[x.Audio.ExternalID] {
			todo = append(todo, x)
		} else {
			r.Seen = append(r.Seen, narrator.SeenItem{ExternalID: x.Audio.ExternalID, Hash: "-", Date: x.Date})
		}
	}
	for _, b := range fi.bads {
		switch {
		case keep[b.item]:
			skipped = append(skipped, b.why)
		case b.id != "":
			// Left out by the backfill: never narrated, whatever
			// becomes of it.
			r.Seen = append(r.Seen, narrator.SeenItem{ExternalID: b.id, Hash: "-"})
		}
	}
	return todo, skipped
}

// changed picks, on a later read, the items that are new or changed since seen, and returns
// why the items that make no audio, and were not left out by the backfill, were skipped.
func (fi feedItems) changed(seen map[string]narrator.SeenItem, pushed bool) (todo []*narrator.SourceAudio, skipped []string) {
	for _, x := range fi.audios {
		if s, ok := seen[x.Audio.ExternalID]; narrator.ItemChanged(s, ok, x.Hash, x.Date, pushed) {
			todo = append(todo, x)
		}
	}
	for _, b := range fi.bads {
		if b.id == "" || seen[b.id].Hash != "-" {
			skipped = append(skipped, b.why)
		}
	}
	return todo, skipped
}

// createAudios creates or updates the audios of todo in order, counting them in r and
// recording them as seen. It returns skipped with the items that could not be narrated
// added, how many items had each field cut, and, if it stopped early, why.
func (p *Poller) createAudios(ctx context.Context, src *narrator.Source, todo []*narrator.SourceAudio, r *narrator.SourceRead, skipped []string) (_ []string, cut map[string]int, stop error) {
	cut = map[string]int{}
	for _, x := range todo {
		if ctx.Err() != nil {
			stop = errors.New("the read was cut short; the remaining items will be read next time")
			break
		}
		a, err := p.fullText(ctx, src, x.Audio)
		if ctx.Err() != nil {
			// The read's budget ran out on the article page.
			stop = errors.New("the read was cut short; the remaining items will be read next time")
			break
		}
		if err == nil {
			err = speak.LengthCheck(p.opts.MaxAudio).Text(a.Title, a.Author, a.Body)
		}
		var created bool
		if err == nil {
			created, err = p.store.CreateAudio(ctx, a)
		}
		switch code := narrator.ErrorCode(err); {
		case err == nil && created:
			r.Created++
		case err == nil:
			r.Updated++
		case code == narrator.EINVALID || code == narrator.EUNREADABLE:
			// Recorded as seen: the item is tried again when it changes.
			skipped = append(skipped, narrator.ErrorMessage(err))
		case code == narrator.EQUOTA || code == narrator.EQUEUEFULL || code == narrator.EUNAVAILABLE:
			stop = fmt.Errorf("items wait for the next read: %s", narrator.ErrorMessage(err))
		default:
			stop = errors.New("items wait for the next read: an audio could not be created")
		}
		if stop != nil {
			break
		}
		if err == nil {
			for _, field := range x.Cut {
				cut[field]++
			}
		}
		r.Seen = append(r.Seen, narrator.SeenItem{ExternalID: x.Audio.ExternalID, Hash: x.Hash, Date: x.Date})
	}
	return skipped, cut, stop
}

// readNotes returns the note a read leaves: why it stopped, what it skipped, what waits for
// the next read, what it left unread and what it cut.
func readNotes(stop error, skipped []string, more, total int, cut map[string]int) string {
	var notes []string
	if stop != nil {
		notes = append(notes, stop.Error())
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("%s not narrated; the first because %s", countItems(len(skipped), "was", "were"), lowerFirst(skipped[0])))
	}
	if more > 0 {
		notes = append(notes, fmt.Sprintf("%d more %s for the next read (at most %d a read)", more, map[bool]string{true: "item waits", false: "items wait"}[more == 1], narrator.MaxItemsPerPoll))
	}
	if total > narrator.MaxItemsPerSource {
		notes = append(notes, fmt.Sprintf("the feed lists %d items; only the first %d are read", total, narrator.MaxItemsPerSource))
	}
	for _, c := range []struct {
		field string
		limit int
	}{{"title", narrator.MaxTitleChars}, {"author", narrator.MaxAuthorChars}} {
		if n := cut[c.field]; n > 0 {
			notes = append(notes, fmt.Sprintf("the %s of %s cut to %d characters", c.field, countItems(n, "was", "were"), c.limit))
		}
	}
	return strings.Join(notes, "; ")
}

// countItems returns "1 item" and verb, or "n items" and plural.
func countItems(n int, verb, plural string) string {
	if n == 1 {
		return "1 item " + verb
	}
	return strconv.Itoa(n) + " items " + plural
}

// fullText returns a with its body read from its article page, when src
// asks for it. A page that cannot be read leaves the feed's text, if the
// feed has any.
func (p *Poller) fullText(ctx context.Context, src *narrator.Source, a *narrator.Audio) (*narrator.Audio, error) {
	if !src.FullText || p.opts.Pages == nil || a.ArticleURL == "" {
		if a.Body == "" {
			return nil, narrator.Errorf(narrator.EINVALID, "item %s has no text", a.ExternalID)
		}
		return a, nil
	}
	page, err := p.opts.Pages.ReadPage(ctx, a.ArticleURL)
	if err != nil {
		if a.Body != "" {
			return a, nil
		}
		return nil, narrator.Errorf(narrator.EUNREADABLE, "%s", narrator.ErrorMessage(err))
	}
	full, err := page.Audio(a.ProjectID, a.ExternalID, a.Metadata)
	if err != nil {
		return nil, err
	}
	if a.Title != "" {
		full.Title = a.Title
	}
	if a.Author != "" {
		full.Author = a.Author
	}
	return full, nil
}

// lowerFirst lowers s's first letter, to follow "because".
func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
