package postgres

import "github.com/narrator/narrator/internal/sqlstore"

// The hot queries, for the plan tests of package postgres_test.
const (
	ListAudiosSQL            = listAudiosSQL
	FindLiveAudioByIDSQL     = findLiveAudioByIDSQL
	FindAudioByArticleURLSQL = findAudioByArticleURLSQL
)

// The hot queries of sqlstore in this dialect, numbered.
var (
	LoadMediaSQL  = numbered(sqlstore.LoadMediaSQL(dialect{}))
	FeedAudiosSQL = numbered(sqlstore.FeedAudiosSQL(dialect{}))
)

// Numbered numbers the ? placeholders of sqlstore's queries, as the store
// does when it runs them.
var Numbered = numbered

// SetAnalyzeAfter sets how many audios s creates before it makes sure
// that the database has statistics on them.
func SetAnalyzeAfter(s *Store, n int64) { s.analyzeAfter = n }

// AuthorizeWaiting returns how many AuthorizeProject calls of s wait in
// line for a group.
func AuthorizeWaiting(s *Store) int { return s.authorizes.Waiting() }

// Unavailable marks the errors that say the database cannot do a request
// now narrator.EUNAVAILABLE.
var Unavailable = unavailable

// CreatesWaiting returns how many creates of s wait in line for a group.
func CreatesWaiting(s *Store) int { return s.creates.Waiting() }

// PlanAhead returns whether the next group of s's creates may plan ahead
// (the last group's projects are known and no miss makes it wait), and how
// many plans ahead in a row missed.
func PlanAhead(s *Store) (ready bool, misses int) {
	return s.ahead.byProject != nil && s.ahead.skip == 0, s.ahead.misses
}
