package mp3

import "time"

// SetTimeout sets the fixed part of each chunk's time limit.
func (p *ChunkPool) SetTimeout(d time.Duration) { p.timeout = d }
