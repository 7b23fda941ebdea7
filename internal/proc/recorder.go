package proc

// Recorder is told what one engine's processes do, for metrics. Its
// methods must be safe for concurrent use and must not block.
type Recorder interface {
	// Busy adds delta (1 or -1) to the processes working on a unit.
	Busy(delta int)
	// Restarted counts a process that failed a unit and was killed, to be
	// replaced by a fresh one.
	Restarted()
	// TimedOut counts a process killed for overrunning a unit's limit.
	TimedOut()
}

// Discard is a Recorder that records nothing.
var Discard Recorder = discard{}

type discard struct{}

func (discard) Busy(int)   {}
func (discard) Restarted() {}
func (discard) TimedOut()  {}
