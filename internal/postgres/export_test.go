package postgres

// The hot queries, for the plan tests of package postgres_test.
const (
	ListAudiosSQL                = listAudiosSQL
	FindLiveAudioByExternalIDSQL = findLiveAudioByExternalIDSQL
	FindLiveAudioByIDSQL         = findLiveAudioByIDSQL
	LoadMediaSQL                 = loadMediaSQL
	FindAudioByArticleURLSQL     = findAudioByArticleURLSQL
	FeedAudiosSQL                = feedAudiosSQL
	AudiosChangedSQL             = audiosChangedSQL
)

// Numbered numbers the ? placeholders of sqlstore's queries, as the store
// does when it runs them.
var Numbered = numbered
