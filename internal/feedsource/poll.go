package feedsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narrator/narrator"
	"github.com/narrator/narrator/internal/fetch"
	"github.com/narrator/narrator/internal/speak"
)

// Store is what a Poller needs of the store; sqlite.Store and
// postgres.Store satisfy it.
type Store interface {
	// Source returns ENOTFOUND for a feed that does not exist.
	Source(ctx context.Context, id int64) (*narrator.Source, error)
	SeenItems(ctx context.Context, sourceID int64, externalIDs []string) (map[string]string, error)
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
	FeedRead(outcome string, took time.Duration)
	FeedItems(action string, n int)
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
	// CallbackURL returns the public URL of a feed's WebSub callback
	// (Callback serves it); nil leaves feeds unsubscribed.
	CallbackURL func(feedID int64) string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Lease is how long a node holds a feed it reads; a node that dies while
// reading releases it when it expires.
const Lease = 5 * time.Minute

// readBudget bounds one read, article pages included, well within its
// lease: the items it has not reached wait for the next read.
const readBudget = 4 * time.Minute

// Poller reads feeds: when they are due (Run), or when asked (Poll). It is
// safe for concurrent use; the store's lease makes sure that one node at a
// time reads a feed, in a cluster too.
type Poller struct {
	store Store
	opts  Options
}

// New returns a poller of the feeds in st.
func New(st Store, opts Options) *Poller {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Poller{store: st, opts: opts}
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

// batch is how many due feeds Run takes at a time, and reads at once.
const batch = 4

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

// RunDue reads the feeds that are due now, a few at a time, and returns
// when they are read.
func (p *Poller) RunDue(ctx context.Context) {
	for ctx.Err() == nil {
		ids, err := p.store.DueSources(ctx, batch)
		if err != nil {
			p.opts.Logger.Error("find due feeds", "err", err)
			return
		}
		if len(ids) == 0 {
			return
		}
		var wg sync.WaitGroup
		var claimed atomic.Int32
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := p.store.ClaimDueSource(ctx, id, p.opts.Now().Add(Lease))
				if err != nil {
					p.opts.Logger.Error("claim feed", "feed_id", id, "err", err)
				}
				if err != nil || !ok {
					return
				}
				claimed.Add(1)
				if err := p.read(ctx, id, nil); err != nil {
					p.opts.Logger.Error("read feed", "feed_id", id, "err", err)
				}
			}()
		}
		wg.Wait()
		if claimed.Load() == 0 {
			// Another node holds them, or the store refuses claims: the
			// next tick tries again, rather than this loop at once.
			return
		}
	}
}

// read reads a claimed feed and records what it found; its error is the
// store's, not the feed's, whose errors are recorded on it. A pushed body
// (WebSub) is read instead of fetching the feed.
func (p *Poller) read(ctx context.Context, id int64, pushed []byte) error {
	src, err := p.store.Source(ctx, id)
	if err != nil {
		// The lease ends by itself; the feed is gone or unreadable.
		return err
	}
	start := p.opts.Now()
	ctx, cancel := context.WithTimeout(ctx, readBudget)
	defer cancel()
	var r narrator.SourceRead
	var hub, topic string
	if pushed != nil {
		r = p.parseAndNarrate(ctx, src, src.State, pushed)
	} else {
		r, hub, topic = p.fetchAndNarrate(ctx, src)
	}
	r.SourceID = src.ID
	r.State.LastFetchAt = start
	if r.State.Status == narrator.SourceStatusError {
		r.State.Failures = src.State.Failures + 1
		p.opts.Logger.Warn("feed read failed", "feed_id", src.ID, "project_id", src.ProjectID, "reason", r.State.LastError)
	}
	r.State.NextPollAt = src.NextPoll(p.opts.Now(), r.State.Failures)
	if p.opts.Recorder != nil {
		p.opts.Recorder.FeedRead(r.State.Status, p.opts.Now().Sub(start))
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
// feed's validators unless the read replaced them. It also returns the
// WebSub hub and topic the feed advertises, if any.
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
	st.ETag, st.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if len(st.ETag) > 500 || !narrator.ValidText(st.ETag) {
		st.ETag = ""
	}
	if len(st.LastModified) > 100 || !narrator.ValidText(st.LastModified) {
		st.LastModified = ""
	}
	r = p.parseAndNarrate(ctx, src, st, resp.Body)
	if r.State.Status == narrator.SourceStatusOK {
		hub, topic = Discover(resp.Body, resp.Header, resp.URL.String())
	}
	return r, hub, topic
}

// parseAndNarrate parses a feed's body, and creates or updates the audios
// of its new and changed items; st is the state to build on.
func (p *Poller) parseAndNarrate(ctx context.Context, src *narrator.Source, st narrator.SourceState, body []byte) narrator.SourceRead {
	st.LastError = ""
	feed, err := Parse(body)
	if err != nil {
		st.Status, st.LastError = narrator.SourceStatusError, err.Error()
		return narrator.SourceRead{State: st}
	}
	st.Status, st.Failures = narrator.SourceStatusOK, 0
	r, err := p.narrate(ctx, src, feed)
	r.State = st
	if err != nil {
		r.State.LastError = err.Error()
	}
	return r
}

// item is a feed item with the audio it makes.
type item struct {
	audio *narrator.Audio
	hash  string
}

// narrate creates or updates the audios of feed's new and changed items,
// oldest first, at most narrator.MaxItemsPerPoll of them, and returns what
// to record. On a feed's first read, the items the backfill rule leaves
// out are recorded as seen but never narrated. Its error says in plain
// words why items were skipped, or why it stopped early.
func (p *Poller) narrate(ctx context.Context, src *narrator.Source, feed *Feed) (narrator.SourceRead, error) {
	var r narrator.SourceRead
	var items []item
	var ids []string
	have := map[string]bool{}
	var skipped []string
	byItem := map[*narrator.FeedItem]item{}
	for _, it := range feed.Items {
		a, hash, err := src.ItemAudio(it)
		if err != nil {
			skipped = append(skipped, narrator.ErrorMessage(err))
			continue
		}
		if have[a.ExternalID] {
			continue // a feed that repeats an item narrates it once
		}
		have[a.ExternalID] = true
		ids = append(ids, a.ExternalID)
		items = append(items, item{a, hash})
		byItem[it] = item{a, hash}
	}
	seen, err := p.store.SeenItems(ctx, src.ID, ids)
	if err != nil {
		return r, errors.New("the feed's items could not be checked; they will be on the next read")
	}
	var todo []item
	if src.State.ItemsSeen == 0 && src.State.Created == 0 && len(seen) == 0 {
		keep := map[string]bool{}
		for _, it := range src.Backfill(feed.Items, p.opts.Now()) {
			if x, ok := byItem[it]; ok {
				keep[x.audio.ExternalID] = true
			}
		}
		for _, x := range items {
			if keep[x.audio.ExternalID] {
				todo = append(todo, x)
			} else {
				r.Seen = append(r.Seen, narrator.SeenItem{ExternalID: x.audio.ExternalID, Hash: "-"})
			}
		}
	} else {
		for _, x := range items {
			if h, ok := seen[x.audio.ExternalID]; !ok || (h != x.hash && h != "-") {
				todo = append(todo, x)
			}
		}
	}
	// Feeds list the newest first; audios are made oldest first.
	slices.Reverse(todo)
	var more int
	if len(todo) > narrator.MaxItemsPerPoll {
		more = len(todo) - narrator.MaxItemsPerPoll
		todo = todo[:narrator.MaxItemsPerPoll]
	}
	var stop error
	for _, x := range todo {
		if ctx.Err() != nil {
			stop = errors.New("the read was cut short; the remaining items will be read next time")
			break
		}
		a, err := p.fullText(ctx, src, x.audio)
		if err == nil && p.opts.MaxAudio > 0 {
			err = narrator.CheckDuration(speak.Estimate(a.Title, a.Author, a.Body), p.opts.MaxAudio)
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
		r.Seen = append(r.Seen, narrator.SeenItem{ExternalID: x.audio.ExternalID, Hash: x.hash})
	}
	if p.opts.Recorder != nil {
		p.opts.Recorder.FeedItems("created", int(r.Created))
		p.opts.Recorder.FeedItems("updated", int(r.Updated))
		p.opts.Recorder.FeedItems("skipped", len(skipped))
	}
	switch {
	case stop != nil:
		return r, stop
	case len(skipped) > 0:
		return r, fmt.Errorf("%d items were not narrated; the first because %s", len(skipped), lowerFirst(skipped[0]))
	case more > 0:
		return r, errors.New(strconv.Itoa(more) + " more items wait for the next read (at most " + strconv.Itoa(narrator.MaxItemsPerPoll) + " a read)")
	case feed.Total > narrator.MaxItemsPerFeed:
		return r, fmt.Errorf("the feed lists %d items; only the first %d are read", feed.Total, narrator.MaxItemsPerFeed)
	}
	return r, nil
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
