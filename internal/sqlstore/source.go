package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/narrator/narrator"
)

// sourceColumns are the columns scanSource reads.
const sourceColumns = `id, project_id, url, headers, mapping, full_text, backfill_items, backfill_since, poll_interval, created_at,
	status, last_error, last_fetch_at, next_poll_at, failures, etag, last_modified, items_seen, created_count, updated_count,
	hub, websub_topic, websub_secret, websub_requested_at, websub_expires_at, websub_pending_mode, websub_pending_topic, websub_pending_at,
	websub_nonce`

// scanSource reads a row of sourceColumns.
func scanSource(row Row) (*narrator.Source, error) {
	var s narrator.Source
	var headers, mapping string
	var fullText, since, interval int64
	var fetched, requested, expires, pending *time.Time
	st := &s.State
	if err := row.Scan(&s.ID, &s.ProjectID, &s.URL, &headers, &mapping, &fullText, &s.BackfillItems, &since, &interval, &s.CreatedAt,
		&st.Status, &st.LastError, &fetched, &st.NextPollAt, &st.Failures, &st.ETag, &st.LastModified, &st.ItemsSeen, &st.Created, &st.Updated,
		&st.WebSub.Hub, &st.WebSub.Topic, &st.WebSub.Secret, &requested, &expires,
		&st.WebSub.Pending.Mode, &st.WebSub.Pending.Topic, &pending, &st.WebSub.Nonce); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(headers), &s.Header); err != nil {
		return nil, fmt.Errorf("source %d headers: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(mapping), &s.Mapping); err != nil {
		return nil, fmt.Errorf("source %d mapping: %w", s.ID, err)
	}
	s.FullText = fullText != 0
	s.BackfillSince = time.Duration(since) * time.Second
	s.Interval = time.Duration(interval) * time.Second
	if fetched != nil {
		st.LastFetchAt = *fetched
	}
	if requested != nil {
		st.WebSub.RequestedAt = *requested
	}
	if expires != nil {
		st.WebSub.ExpiresAt = *expires
	}
	if pending != nil {
		st.WebSub.Pending.SentAt = *pending
	}
	return &s, nil
}

// jsonObject encodes a map of strings as a JSON object, {} when empty.
func jsonObject(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m) // a map of strings always encodes
	return string(b)
}

func sourceNotFound(id int64) error {
	return narrator.Errorf(narrator.ENOTFOUND, "feed %d not found", id)
}

const lockProjectTypeSQL = `SELECT type, account_id FROM projects WHERE id = ?`

const countSourcesSQL = `SELECT COUNT(*) FROM sources WHERE project_id = ?`

const countAccountSourcesSQL = `
SELECT COUNT(*) FROM sources f JOIN projects p ON p.id = f.project_id WHERE p.account_id = ?`

// accountSourcesKey is the LockKey that serialises the creates of an
// account's feeds, whose number its limits bound.
func accountSourcesKey(accountID int64) string {
	return fmt.Sprintf("feed-sources:account:%d", accountID)
}

// accountReadsKey is the LockKey that serialises the scheduled claims of
// an account's feeds, whose reads at once narrator.MayRead bounds.
func accountReadsKey(accountID int64) string { return fmt.Sprintf("feed-reads:account:%d", accountID) }

const insertSourceSQL = `
INSERT INTO sources (project_id, url, headers, mapping, full_text, backfill_items, backfill_since, poll_interval, created_at,
	status, last_error, next_poll_at, failures, etag, last_modified, items_seen, created_count, updated_count, hub, websub_topic, websub_secret)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, 0, '', '', 0, 0, 0, '', '', '')`

// CreateSource stores a new feed of a project, made by narrator.NewSource,
// due to be read at once, and fills in its ID, CreatedAt and State. It
// returns ENOTFOUND if the project does not exist, EINVALID if s is not
// valid or the project is not of type rss, and ECONFLICT if the project has
// narrator.MaxSourcesPerProject feeds already or its account as many as
// its limits allow (narrator.Limits.CheckSources).
func (s *Store) CreateSource(ctx context.Context, src *narrator.Source) error {
	if err := src.Validate(); err != nil {
		return err
	}
	return s.write(ctx, "create feed", func(tx Tx) error {
		var err error
		var typ string
		var accountID int64
		if err := tx.QueryRow(ctx, lockProjectTypeSQL+s.db.ForUpdate(), src.ProjectID).Scan(&typ, &accountID); errors.Is(err, sql.ErrNoRows) {
			return narrator.Errorf(narrator.ENOTFOUND, "project %d not found", src.ProjectID)
		} else if err != nil {
			return fmt.Errorf("create feed in project %d: %w", src.ProjectID, err)
		}
		if typ != narrator.ProjectTypeRSS {
			return narrator.Errorf(narrator.EINVALID, "project %d is of type %s; feeds belong to projects of type %s", src.ProjectID, typ, narrator.ProjectTypeRSS)
		}
		var n int
		if err := tx.QueryRow(ctx, countSourcesSQL, src.ProjectID).Scan(&n); err != nil {
			return fmt.Errorf("create feed in project %d: %w", src.ProjectID, err)
		}
		if n >= narrator.MaxSourcesPerProject {
			return narrator.Errorf(narrator.ECONFLICT, "a project has at most %d feeds", narrator.MaxSourcesPerProject)
		}
		if err := s.db.LockKey(ctx, tx, accountSourcesKey(accountID)); err != nil {
			return fmt.Errorf("create feed in project %d: lock account %d: %w", src.ProjectID, accountID, err)
		}
		if err := tx.QueryRow(ctx, countAccountSourcesSQL, accountID).Scan(&n); err != nil {
			return fmt.Errorf("create feed in project %d: %w", src.ProjectID, err)
		}
		if err := s.db.Limits().CheckSources(n); err != nil {
			return err
		}
		now := s.now()
		fullText := 0
		if src.FullText {
			fullText = 1
		}
		src.CreatedAt = now
		src.State = narrator.SourceState{Status: narrator.SourceStatusNew, NextPollAt: now}
		src.ID, err = tx.Insert(ctx, insertSourceSQL, src.ProjectID, src.URL, jsonObject(src.Header), jsonObject(src.Mapping), fullText,
			src.BackfillItems, int64(src.BackfillSince/time.Second), int64(src.Interval/time.Second), now, narrator.SourceStatusNew, now)
		if err != nil {
			return fmt.Errorf("create feed in project %d: %w", src.ProjectID, err)
		}
		return nil
	})
}

const findSourceSQL = `SELECT ` + sourceColumns + ` FROM sources WHERE id = ?`

// Source returns a feed. It returns ENOTFOUND if there is none of that ID.
func (s *Store) Source(ctx context.Context, id int64) (*narrator.Source, error) {
	return s.findSource(ctx, id, findSourceSQL, id)
}

const findProjectSourceSQL = `SELECT ` + sourceColumns + ` FROM sources WHERE id = ? AND project_id = ?`

// FindSource returns a project's feed. It returns ENOTFOUND if the project
// has none of that ID, whatever other projects have.
func (s *Store) FindSource(ctx context.Context, projectID, id int64) (*narrator.Source, error) {
	return s.findSource(ctx, id, findProjectSourceSQL, id, projectID)
}

// findSource reads the feed id with query and its args.
func (s *Store) findSource(ctx context.Context, id int64, query string, args ...any) (*narrator.Source, error) {
	return ReadV(ctx, s, fmt.Sprintf("find feed %d", id), func(tx Tx) (*narrator.Source, error) {
		src, err := scanSource(tx.QueryRow(ctx, query, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, sourceNotFound(id)
		} else if err != nil {
			return nil, fmt.Errorf("find feed %d: %w", id, err)
		}
		return src, nil
	})
}

const listSourcesSQL = `SELECT ` + sourceColumns + ` FROM sources WHERE project_id = ? ORDER BY id`

// ListSources returns a project's feeds, oldest first; the slice is empty,
// not nil, when there are none.
func (s *Store) ListSources(ctx context.Context, projectID int64) ([]*narrator.Source, error) {
	return ReadV(ctx, s, fmt.Sprintf("list feeds of project %d", projectID), func(tx Tx) ([]*narrator.Source, error) {
		rows, err := tx.Query(ctx, listSourcesSQL, projectID)
		if err != nil {
			return nil, fmt.Errorf("list feeds of project %d: %w", projectID, err)
		}
		defer rows.Close()
		out := []*narrator.Source{}
		for rows.Next() {
			src, err := scanSource(rows)
			if err != nil {
				return nil, fmt.Errorf("list feeds of project %d: %w", projectID, err)
			}
			out = append(out, src)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("list feeds of project %d: %w", projectID, err)
		}
		return out, nil
	})
}

const deleteSourceItemsSQL = `DELETE FROM source_items WHERE source_id = ?`
const deleteSourceSQL = `DELETE FROM sources WHERE id = ? AND project_id = ?`

// DeleteSource removes a project's feed and the record of the items it
// saw; the audios its items made stay. It returns ENOTFOUND if the project
// has no such feed.
func (s *Store) DeleteSource(ctx context.Context, projectID, id int64) error {
	return s.write(ctx, fmt.Sprintf("delete feed %d", id), func(tx Tx) error {
		var found int64
		if err := tx.QueryRow(ctx, `SELECT id FROM sources WHERE id = ? AND project_id = ?`+s.db.ForUpdate(), id, projectID).Scan(&found); errors.Is(err, sql.ErrNoRows) {
			return sourceNotFound(id)
		} else if err != nil {
			return fmt.Errorf("delete feed %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, deleteSourceItemsSQL, id); err != nil {
			return fmt.Errorf("delete feed %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, deleteSourceSQL, id, projectID); err != nil {
			return fmt.Errorf("delete feed %d: %w", id, err)
		}
		return nil
	})
}

// seenChunk is how many external IDs one query of SeenItems asks about.
const seenChunk = 200

// SeenItems returns, of the given external IDs, those a read of the feed
// recorded, with the hash and date recorded for each.
func (s *Store) SeenItems(ctx context.Context, sourceID int64, externalIDs []string) (map[string]narrator.SeenItem, error) {
	return ReadV(ctx, s, fmt.Sprintf("seen items of feed %d", sourceID), func(tx Tx) (map[string]narrator.SeenItem, error) {
		out := map[string]narrator.SeenItem{}
		for len(externalIDs) > 0 {
			chunk := externalIDs[:min(len(externalIDs), seenChunk)]
			externalIDs = externalIDs[len(chunk):]
			args := []any{sourceID}
			for _, id := range chunk {
				args = append(args, id)
			}
			q := `SELECT external_id, hash, item_updated_at FROM source_items WHERE source_id = ? AND external_id IN (?` + strings.Repeat(", ?", len(chunk)-1) + `)`
			rows, err := tx.Query(ctx, q, args...)
			if err != nil {
				return nil, fmt.Errorf("seen items of feed %d: %w", sourceID, err)
			}
			for rows.Next() {
				var it narrator.SeenItem
				var date *time.Time
				if err := rows.Scan(&it.ExternalID, &it.Hash, &date); err != nil {
					rows.Close()
					return nil, fmt.Errorf("seen items of feed %d: %w", sourceID, err)
				}
				if date != nil {
					it.Date = *date
				}
				out[it.ExternalID] = it
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("seen items of feed %d: %w", sourceID, err)
			}
		}
		return out, nil
	})
}

const (
	claimSourceSQL    = `UPDATE sources SET lease_until = ? WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)`
	claimDueSourceSQL = claimSourceSQL + ` AND next_poll_at <= ?`
)

// ClaimSource leases a feed to the caller until until, so that no other
// node reads it meanwhile; RecordRead ends the lease. It reports false if
// another holds an unexpired lease, and returns ENOTFOUND if there is no
// such feed.
func (s *Store) ClaimSource(ctx context.Context, id int64, until time.Time) (bool, error) {
	return s.claimSource(ctx, id, until, false)
}

// ClaimDueSource is ClaimSource for a scheduled read: it also reports
// false if the feed is not due, because another node read it since the
// caller found it due, or if its account has as many feeds being read as
// narrator.MayRead allows.
func (s *Store) ClaimDueSource(ctx context.Context, id int64, until time.Time) (bool, error) {
	return s.claimSource(ctx, id, until, true)
}

func (s *Store) claimSource(ctx context.Context, id int64, until time.Time, due bool) (bool, error) {
	return WriteV(ctx, s, fmt.Sprintf("claim feed %d", id), func(tx Tx) (bool, error) {
		var err error
		now := s.now()
		if due {
			var accountID int64
			if err := tx.QueryRow(ctx, sourceAccountSQL, id).Scan(&accountID); errors.Is(err, sql.ErrNoRows) {
				return false, sourceNotFound(id)
			} else if err != nil {
				return false, fmt.Errorf("claim feed %d: %w", id, err)
			}
			// Claims of one account's feeds take turns, on every node, so
			// that each counts the reads the others claimed.
			if err := s.db.LockKey(ctx, tx, accountReadsKey(accountID)); err != nil {
				return false, fmt.Errorf("claim feed %d: lock account %d: %w", id, accountID, err)
			}
			var reading int
			if err := tx.QueryRow(ctx, accountReadsSQL, accountID, now).Scan(&reading); err != nil {
				return false, fmt.Errorf("claim feed %d: %w", id, err)
			}
			if !narrator.MayRead(reading) {
				return false, nil
			}
		}
		var n int64
		if due {
			n, err = tx.Exec(ctx, claimDueSourceSQL, until, id, now, now)
		} else {
			n, err = tx.Exec(ctx, claimSourceSQL, until, id, now)
		}
		if err != nil {
			return false, fmt.Errorf("claim feed %d: %w", id, err)
		}
		if n == 0 {
			var found int64
			if err := tx.QueryRow(ctx, `SELECT id FROM sources WHERE id = ?`, id).Scan(&found); errors.Is(err, sql.ErrNoRows) {
				return false, sourceNotFound(id)
			} else if err != nil {
				return false, fmt.Errorf("claim feed %d: %w", id, err)
			}
			return false, nil
		}
		return true, nil
	})
}

const sourceAccountSQL = `SELECT p.account_id FROM sources f JOIN projects p ON p.id = f.project_id WHERE f.id = ?`

// accountReadsSQL counts an account's feeds being read: leased until
// after $2, now.
const accountReadsSQL = `
SELECT COUNT(*) FROM sources f JOIN projects p ON p.id = f.project_id WHERE p.account_id = ? AND f.lease_until > ?`

// readsSQL counts, by account, the feeds being read: leased until after
// $1, now.
const readsSQL = `
SELECT p.account_id, COUNT(*) FROM sources f JOIN projects p ON p.id = f.project_id
WHERE f.lease_until > ? GROUP BY p.account_id`

// dueSourcesSQL lists the feeds due at $1 and not leased, longest due
// first, with their accounts: of each account only the $3 longest due,
// since narrator.FairReads takes no more of one account.
const dueSourcesSQL = `
SELECT id, account_id FROM (
	SELECT f.id, p.account_id, f.next_poll_at,
		ROW_NUMBER() OVER (PARTITION BY p.account_id ORDER BY f.next_poll_at, f.id) AS turn
	FROM sources f JOIN projects p ON p.id = f.project_id
	WHERE f.next_poll_at <= ? AND (f.lease_until IS NULL OR f.lease_until <= ?)
) due WHERE turn <= ? ORDER BY next_poll_at, id`

// DueSources returns up to limit feeds due to be read and not leased, in
// the order and within the share of each account that narrator.FairReads
// decides. It may return fewer than limit while more are due: those of
// accounts whose feeds are being read.
func (s *Store) DueSources(ctx context.Context, limit int) ([]int64, error) {
	return ReadV(ctx, s, "due feeds", func(tx Tx) ([]int64, error) {
		now := s.now()
		reading := map[int64]int{}
		rows, err := tx.Query(ctx, readsSQL, now)
		if err != nil {
			return nil, fmt.Errorf("due feeds: reads: %w", err)
		}
		for rows.Next() {
			var account int64
			var n int
			if err := rows.Scan(&account, &n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("due feeds: reads: %w", err)
			}
			reading[account] = n
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("due feeds: reads: %w", err)
		}
		rows, err = tx.Query(ctx, dueSourcesSQL, now, now, narrator.MaxReadsPerAccount)
		if err != nil {
			return nil, fmt.Errorf("due feeds: %w", err)
		}
		defer rows.Close()
		var due []narrator.DueSource
		for rows.Next() {
			var f narrator.DueSource
			if err := rows.Scan(&f.ID, &f.AccountID); err != nil {
				return nil, fmt.Errorf("due feeds: %w", err)
			}
			due = append(due, f)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("due feeds: %w", err)
		}
		return narrator.FairReads(due, reading, limit), nil
	})
}

const upsertSeenSQL = `
INSERT INTO source_items (source_id, external_id, hash, item_updated_at, seen_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (source_id, external_id) DO UPDATE SET hash = excluded.hash, item_updated_at = excluded.item_updated_at, seen_at = excluded.seen_at`

const recordReadSQL = `
UPDATE sources SET status = ?, last_error = ?, last_fetch_at = ?, next_poll_at = ?, failures = ?, etag = ?, last_modified = ?,
	created_count = created_count + ?, updated_count = updated_count + ?, lease_until = NULL,
	items_seen = (SELECT COUNT(*) FROM source_items WHERE source_id = ?)
WHERE id = ?`

// RecordRead records a read of a feed at once: its items seen, its new
// state and counts, but not its subscription (SetSubscription); it ends
// the read's lease. It returns ENOTFOUND if the
// feed was removed meanwhile.
func (s *Store) RecordRead(ctx context.Context, r narrator.SourceRead) error {
	return s.write(ctx, fmt.Sprintf("record read of feed %d", r.SourceID), func(tx Tx) error {
		var found int64
		if err := tx.QueryRow(ctx, `SELECT id FROM sources WHERE id = ?`+s.db.ForUpdate(), r.SourceID).Scan(&found); errors.Is(err, sql.ErrNoRows) {
			return sourceNotFound(r.SourceID)
		} else if err != nil {
			return fmt.Errorf("record read of feed %d: %w", r.SourceID, err)
		}
		now := s.now()
		for _, it := range r.Seen {
			if _, err := tx.Exec(ctx, upsertSeenSQL, r.SourceID, it.ExternalID, it.Hash, NullTime(it.Date), now); err != nil {
				return fmt.Errorf("record read of feed %d: item %q: %w", r.SourceID, it.ExternalID, err)
			}
		}
		st := r.State
		if _, err := tx.Exec(ctx, recordReadSQL, st.Status, st.LastError, NullTime(st.LastFetchAt), st.NextPollAt, st.Failures, st.ETag, st.LastModified,
			r.Created, r.Updated, r.SourceID, r.SourceID); err != nil {
			return fmt.Errorf("record read of feed %d: %w", r.SourceID, err)
		}
		return nil
	})
}

const setSubscriptionSQL = `
UPDATE sources SET hub = ?, websub_topic = ?, websub_secret = ?, websub_requested_at = ?, websub_expires_at = ?,
	websub_pending_mode = ?, websub_pending_topic = ?, websub_pending_at = ?, websub_nonce = ?
WHERE id = ?`

// SetSubscription records a feed's WebSub subscription, its pending
// request included. It returns ENOTFOUND if there is no such feed.
func (s *Store) SetSubscription(ctx context.Context, id int64, sub narrator.Subscription) error {
	return s.write(ctx, fmt.Sprintf("set subscription of feed %d", id), func(tx Tx) error {
		n, err := tx.Exec(ctx, setSubscriptionSQL, sub.Hub, sub.Topic, sub.Secret, NullTime(sub.RequestedAt), NullTime(sub.ExpiresAt),
			sub.Pending.Mode, sub.Pending.Topic, NullTime(sub.Pending.SentAt), sub.Nonce, id)
		if err != nil {
			return fmt.Errorf("set subscription of feed %d: %w", id, err)
		}
		if n == 0 {
			return sourceNotFound(id)
		}
		return nil
	})
}
