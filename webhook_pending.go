package narrator

import "time"

// MaxPendingDeliveries caps an endpoint's pending deliveries, so that no
// caller can pile up attempts (and jobs) faster than the endpoint drains
// them. At the cap, a new delivery of an audio's event collapses the
// endpoint's oldest pending one (it fails, "superseded", and its job is
// removed from the queue unless it is running, when it finds nothing to
// do): the receiver still hears of the latest change, and the audio's own
// write is never refused for its webhooks. A test or a resend
// is refused with ERATELIMITED instead (PendingFull).
const MaxPendingDeliveries = 100

// DeliveryHorizon is how long a delivery may stay pending with no attempt
// (since it was made, or since its last attempt): the queue's waits
// between attempts are much shorter, so such a delivery was lost with its
// job; it fails, "expired", when the endpoint's next delivery is written,
// and its job, if one still waits, is removed.
const DeliveryHorizon = 48 * time.Hour

// Reasons a pending delivery was given up without an attempt.
const (
	DeliverySuperseded = "superseded: the endpoint had too many pending deliveries"
	DeliveryExpired    = "expired: pending past the retry horizon"
)

// PendingRoom returns how many of an endpoint's oldest pending deliveries
// a new one must collapse, when it already has pending: enough to stay
// within MaxPendingDeliveries.
func PendingRoom(pending int) int {
	return max(0, pending+1-MaxPendingDeliveries)
}

// PendingFull returns the refusal of a test or a resend to an endpoint
// that has MaxPendingDeliveries pending.
func PendingFull(webhookID int64) error {
	return Errorf(ERATELIMITED, "webhook %d has %d deliveries pending; try again once some are delivered or have failed", webhookID, MaxPendingDeliveries)
}

// GivenUp reports whether d failed without its attempts running out:
// superseded or expired. Its queued job has nothing to do.
func (d *WebhookDelivery) GivenUp() bool {
	return d.State == DeliveryFailed && (d.LastError == DeliverySuperseded || d.LastError == DeliveryExpired)
}
