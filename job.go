package narrator

import "time"

// Job is background work that must follow a stored change. Stores enqueue
// it in the transaction of the change, through one seam that every job kind
// shares, so that the job exists exactly when the change is committed. The
// jobs package maps each kind to its queue.
type Job interface {
	// JobKind names the kind of work, for logs and errors.
	JobKind() string
}

// SynthesizeJob asks for one revision of an audio to be turned into speech.
type SynthesizeJob struct {
	AudioID  int64
	Revision int
	// Round is the job's fair-scheduling round (FairRound): synthesis jobs
	// start in order of their rounds, then of their insertion.
	Round int64
	// After, when set, makes the job the next try of one that found
	// another attempt holding the revision's lease (RequeueSynthesis): it
	// starts after After, before the jobs that never started, and Round
	// is unused.
	After time.Time
}

// JobKind implements Job.
func (SynthesizeJob) JobKind() string { return "synthesize_audio" }

// DeleteMediaJob asks for media files, and everything stored beside them
// under the same token, to be deleted.
type DeleteMediaJob struct {
	Keys []string
}

// JobKind implements Job.
func (DeleteMediaJob) JobKind() string { return "delete_media" }

// PreviewJob asks for a short sample of a voice, spoken by a worker node
// and stored in the media store at Key, where every node finds it.
type PreviewJob struct {
	Language string
	Voice    string
	Text     string
	Key      string
}

// JobKind implements Job.
func (PreviewJob) JobKind() string { return "voice_preview" }

// WebhookJob asks for one attempt at a webhook delivery, and more if it
// fails. Resending a delivery enqueues another.
type WebhookJob struct {
	DeliveryID int64
}

// JobKind implements Job.
func (WebhookJob) JobKind() string { return "webhook_delivery" }

// JobCount is how many jobs of one kind are in one state of the queue
// ("available", "scheduled", "retryable", "running" or "pending"): a
// reading of the queue's depth, for metrics.
type JobCount struct {
	Kind  string
	State string
	Count int64
}
