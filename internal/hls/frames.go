package hls

import (
	"errors"
	"fmt"
)

// SegmentMP3 returns the MP3 frames that a segment made by a Segmenter
// carries, in order: the payload of the PES packets of its audio stream.
// Concatenated over a playlist's segments they are the MP3 stream that was
// segmented, so a server can send a live stream as a growing MP3 to
// players that do not play HLS. It returns an error for data that is not
// whole transport stream packets of the Segmenter's layout.
func SegmentMP3(ts []byte) ([]byte, error) {
	if len(ts)%packetSize != 0 {
		return nil, fmt.Errorf("hls: segment of %d bytes is not whole transport stream packets", len(ts))
	}
	var out []byte
	for off := 0; off < len(ts); off += packetSize {
		p := ts[off : off+packetSize]
		if p[0] != 0x47 { // the sync byte
			return nil, fmt.Errorf("hls: packet %d has no sync byte", off/packetSize)
		}
		pid := uint16(p[1]&0x1F)<<8 | uint16(p[2])
		if pid != audioPID {
			continue
		}
		start := p[1]&0x40 != 0
		payload := p[4:]
		switch p[3] & 0x30 {
		case 0x10: // payload only
		case 0x30: // adaptation field, then payload
			n := int(p[4])
			if 1+n > len(payload) {
				return nil, fmt.Errorf("hls: packet %d has an adaptation field longer than the packet", off/packetSize)
			}
			payload = payload[1+n:]
		default: // no payload
			continue
		}
		if start {
			// A PES header: start code, stream ID, length, flags, and the
			// optional fields whose length its ninth byte gives.
			if len(payload) < 9 || payload[0] != 0 || payload[1] != 0 || payload[2] != 1 {
				return nil, errors.New("hls: PES packet without a start code")
			}
			h := 9 + int(payload[8])
			if h > len(payload) {
				return nil, errors.New("hls: PES header longer than its packet")
			}
			payload = payload[h:]
		}
		out = append(out, payload...)
	}
	return out, nil
}
