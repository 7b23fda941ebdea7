package postgres

// The hot queries, for the plan tests of package postgres_test.
const (
	ListAudiosSQL                = listAudiosSQL
	FindLiveAudioByExternalIDSQL = findLiveAudioByExternalIDSQL
	FindLiveAudioByIDSQL         = findLiveAudioByIDSQL
	LoadMediaSQL                 = loadMediaSQL
	FindAudioByArticleURLSQL     = findAudioByArticleURLSQL
	AudioListensSQL              = audioListensSQL
	ProjectListensSQL            = projectListensSQL
	FeedAudiosSQL                = feedAudiosSQL
	AudiosChangedSQL             = audiosChangedSQL
)
