package hls

import "encoding/binary"

// MPEG-TS layout of every segment: a PAT, a PMT, then the audio PES packets.
// The PIDs and stream settings are those ffmpeg's muxer uses, which every
// HLS player we target is known to accept.
const (
	packetSize = 188
	patPID     = 0x0000
	pmtPID     = 0x1000
	audioPID   = 0x0100
	programNum = 1
	// streamTypeMPEG1Audio is ISO/IEC 11172-3 audio (MP3 included).
	streamTypeMPEG1Audio = 0x03
	audioStreamID        = 0xC0
	// maxPESPayload is ffmpeg's default PES payload size: about 14 frames
	// of 64 kbps MP3, 0.37 s.
	maxPESPayload = 2930
	// ptsOffset is the PTS of the first sample, 1.4 s as ffmpeg starts,
	// and pcrDelay is how far the PCR runs ahead of the PTS.
	ptsOffset = 126000
	pcrDelay  = 63000
	clockRate = 90000
	ptsMask   = 1<<33 - 1
)

// tsWriter appends TS packets to a buffer, keeping continuity counters per
// PID across segments.
type tsWriter struct {
	buf   []byte
	ccPAT uint8
	ccPMT uint8
	ccAud uint8
}

// counter returns the next continuity counter of pid.
func (w *tsWriter) counter(pid uint16) uint8 {
	var c *uint8
	switch pid {
	case patPID:
		c = &w.ccPAT
	case pmtPID:
		c = &w.ccPMT
	default:
		c = &w.ccAud
	}
	v := *c
	*c = (v + 1) & 0x0F
	return v
}

// writeTables appends one PAT and one PMT packet.
func (w *tsWriter) writeTables() {
	pat := []byte{
		0x00,       // table_id: program_association_section
		0xB0, 0x0D, // section_syntax_indicator, '0', reserved, section_length 13
		0x00, 0x01, // transport_stream_id
		0xC1,       // reserved, version 0, current_next_indicator
		0x00, 0x00, // section_number, last_section_number
		byte(programNum >> 8), byte(programNum),
		0xE0 | byte(pmtPID>>8), byte(pmtPID & 0xFF),
	}
	w.writeSection(patPID, pat)
	pmt := []byte{
		0x02,       // table_id: TS_program_map_section
		0xB0, 0x12, // section_length 18
		byte(programNum >> 8), byte(programNum),
		0xC1, 0x00, 0x00,
		0xE0 | byte(audioPID>>8), byte(audioPID & 0xFF), // PCR_PID
		0xF0, 0x00, // program_info_length 0
		streamTypeMPEG1Audio,
		0xE0 | byte(audioPID>>8), byte(audioPID & 0xFF),
		0xF0, 0x00, // ES_info_length 0
	}
	w.writeSection(pmtPID, pmt)
}

// writeSection appends a one-packet PSI section, adding its CRC.
func (w *tsWriter) writeSection(pid uint16, section []byte) {
	section = binary.BigEndian.AppendUint32(section, crc32MPEG(section))
	p := make([]byte, packetSize)
	p[0] = 0x47
	p[1] = 0x40 | byte(pid>>8) // payload_unit_start_indicator
	p[2] = byte(pid)
	p[3] = 0x10 | w.counter(pid) // payload only
	p[4] = 0                     // pointer_field
	n := copy(p[5:], section)
	for i := 5 + n; i < packetSize; i++ {
		p[i] = 0xFF
	}
	w.buf = append(w.buf, p...)
}

// writePES appends one PES packet holding payload (whole MP3 frames) with
// the given PTS, in TS packets on the audio PID. The first packet carries a
// PCR and the random access indicator.
func (w *tsWriter) writePES(pts int64, payload []byte) {
	pes := make([]byte, 0, 14+len(payload))
	pes = append(pes, 0x00, 0x00, 0x01, audioStreamID)
	pes = binary.BigEndian.AppendUint16(pes, uint16(8+len(payload)))
	pes = append(pes,
		0x80, // '10', not scrambled, no priority, no alignment flag, no copyright
		0x80, // PTS only
		5,    // PES_header_data_length
	)
	pes = appendTimestamp(pes, 0x2, pts)
	pes = append(pes, payload...)

	pcr := (pts - pcrDelay) & ptsMask
	af := []byte{
		0x50, // random_access_indicator, PCR_flag
		byte(pcr >> 25), byte(pcr >> 17), byte(pcr >> 9), byte(pcr >> 1),
		byte(pcr&1)<<7 | 0x7E, 0x00, // PCR extension 0
	}
	first := true
	for len(pes) > 0 {
		n := w.writePacket(audioPID, first, af, pes)
		pes = pes[n:]
		first, af = false, nil
	}
}

// writePacket appends one TS packet with the adaptation field af (its
// contents after the length byte, or nil) and as much of payload as fits,
// stuffing the adaptation field if payload is short. It returns the number of
// payload bytes used.
func (w *tsWriter) writePacket(pid uint16, start bool, af, payload []byte) int {
	p := make([]byte, 4, packetSize)
	p[0] = 0x47
	p[1] = byte(pid>>8) & 0x1F
	if start {
		p[1] |= 0x40
	}
	p[2] = byte(pid)
	room := packetSize - 4
	if af != nil {
		room -= 1 + len(af)
	}
	n := min(room, len(payload))
	if stuff := room - n; af != nil || stuff > 0 {
		p[3] = 0x30 | w.counter(pid) // adaptation field and payload
		if af == nil {
			stuff-- // the length byte itself
			if stuff > 0 {
				af = []byte{0x00} // flags
				stuff--
			}
		}
		p = append(p, byte(len(af)+stuff))
		p = append(p, af...)
		for range stuff {
			p = append(p, 0xFF)
		}
	} else {
		p[3] = 0x10 | w.counter(pid)
	}
	p = append(p, payload[:n]...)
	w.buf = append(w.buf, p...)
	return n
}

// appendTimestamp appends a 33-bit PTS/DTS with its 4-bit prefix and
// marker bits.
func appendTimestamp(b []byte, prefix byte, ts int64) []byte {
	ts &= ptsMask
	return append(b,
		prefix<<4|byte(ts>>29)&0x0E|0x01,
		byte(ts>>22),
		byte(ts>>14)|0x01,
		byte(ts>>7),
		byte(ts<<1)|0x01,
	)
}

// crc32MPEG is the CRC-32/MPEG-2 of PSI sections: polynomial 0x04C11DB7,
// initial value 0xFFFFFFFF, not reflected, no final XOR.
func crc32MPEG(b []byte) uint32 {
	crc := uint32(0xFFFFFFFF)
	for _, v := range b {
		crc ^= uint32(v) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04C11DB7
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
