package narrator

import "time"

// ResynthesisJob asks for audios of a project to be synthesised again:
// those that contain a phrase, after a pronunciation rule for it was added
// or removed, or, with All, every one, after a change of the project's
// intro, outro, voices or speaking rate. A worker scans the project
// outside any write, then re-queues the audios in batches of
// ResynthesisBatch, each batch one write that obeys the account's limits
// (Limits.CheckSynthesis). What does not fit waits: the job tries again
// later (ResynthesisRetry), for up to ResynthesisPatience, and then gives
// up on the rest. A project has at most one such job at a time, of
// either form.
type ResynthesisJob struct {
	ProjectID int64
	// Phrase is the phrase of the rule that changed; All ignores it.
	Phrase string
	// All asks for every live audio of the project, whatever its text.
	All bool
}

// JobKind implements Job.
func (ResynthesisJob) JobKind() string { return "resynthesize_project" }

// How a ResynthesisJob paces itself.
const (
	// ResynthesisBatch is how many audios one write re-queues.
	ResynthesisBatch = 50
	// ResynthesisRetry is how long the job waits when the account's
	// queue or storage is full.
	ResynthesisRetry = time.Minute
	// ResynthesisPatience is how long after it was queued the job still
	// waits for room; then the audios left are not re-queued.
	ResynthesisPatience = 24 * time.Hour
)

// Needs reports whether a, as stored, is to be re-queued by the job: for
// All, whether it is live and not already waiting for synthesis (which
// reads the project's settings when it runs); otherwise as the rule for
// the job's phrase decides (Pronunciation.NeedsResynthesis).
func (j ResynthesisJob) Needs(a *Audio) bool {
	if j.All {
		return !a.Deleted && a.State != StateUnprocessed
	}
	rule := Pronunciation{ProjectID: j.ProjectID, Phrase: j.Phrase}
	return rule.NeedsResynthesis(a)
}

// NeedsResynthesis reports whether a, as stored, is to be re-queued for
// rule p: it is live, not already waiting for synthesis (which reads the
// rules when it runs), and its title, body or author contains the phrase.
func (p *Pronunciation) NeedsResynthesis(a *Audio) bool {
	return !a.Deleted && a.State != StateUnprocessed &&
		(p.Matches(a.Title) || p.Matches(a.Body) || p.Matches(a.Author))
}

// ResynthesisBusy is the refusal of a second resynthesis of a project
// while one is queued or running.
func ResynthesisBusy(projectID int64) error {
	return Errorf(ECONFLICT, "a resynthesis of project %d is already under way; ask again once it has finished", projectID)
}
