// Package hls packages an MP3 stream as HTTP Live Streaming video on demand:
// MPEG-TS segments that carry the MP3 frames untouched (stream type 0x03),
// and a version 3 VOD playlist. While the stream is still being made, an
// EVENT playlist of the segments stored so far lets players start early
// (Segmenter.Live, EventPlaylist): its segments are stored as soon as they
// are cut, the first one short, and its last one may be short too.
//
// Segments are cut at frame boundaries once they reach the target duration,
// so each lasts the target plus at most one frame. A last piece shorter than
// half the target is joined to the segment before it, so that only the last
// segment departs from the target, and by less than half of it. The PTS runs
// on from segment to segment, computed from the count of samples, and the
// EXTINF durations are exact: they add up to the MP3's duration.
package hls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/narrator/narrator/internal/ctxio"
	"github.com/narrator/narrator/internal/mp3"
)

// DefaultTarget is the segment duration used when none is given.
const DefaultTarget = 6 * time.Second

// PlaylistName is the usual name of the playlist file; Package and Segmenter
// leave storing the playlist to the caller.
const PlaylistName = "playlist.m3u8"

// SegmentName returns the name of segment i: seg-00000.ts, seg-00001.ts, …
func SegmentName(i int) string {
	return fmt.Sprintf("seg-%05d.ts", i)
}

// A Segment describes one stored segment.
type Segment struct {
	// Name is the segment's file name, relative to the playlist.
	Name string
	// Samples is the number of audio samples it plays, at SampleRate Hz.
	Samples    int64
	SampleRate int
	// Size is its length in bytes.
	Size int
}

// Duration returns how long the segment plays.
func (s Segment) Duration() time.Duration {
	return time.Duration(s.Samples * int64(time.Second) / int64(s.SampleRate))
}

// A PutFunc stores a finished segment under name. It may keep data.
type PutFunc func(name string, data []byte) error

// A Segmenter cuts the MP3 stream written to it into MPEG-TS segments as the
// stream arrives, handing each finished segment to its PutFunc, and returns
// the playlist on Close. It holds at most two segments in memory, so it can
// sit behind an encoder (io.MultiWriter) on a stream of any length. A
// Segmenter is not safe for concurrent use.
type Segmenter struct {
	target time.Duration
	put    PutFunc
	frames *mp3.FrameWriter
	ts     tsWriter

	rate     int
	samples  int64  // samples of all frames so far; the PTS clock
	pes      []byte // frames waiting for the next PES packet
	pesStart int64  // sample index of the first frame in pes

	cur      *pending // segment being filled
	prev     *pending // finished segment, held back in case the last one is short
	segments []Segment
	closed   bool

	live   bool                           // see Live
	first  time.Duration                  // target of the first segment; 0 means target
	stored func(segments []Segment) error // called after each segment is stored
}

type pending struct {
	data    []byte
	samples int64
}

// NewSegmenter returns a Segmenter cutting segments of about target (0 means
// DefaultTarget) and storing them with put.
func NewSegmenter(target time.Duration, put PutFunc) *Segmenter {
	if target <= 0 {
		target = DefaultTarget
	}
	s := &Segmenter{target: target, put: put}
	s.frames = mp3.NewFrameWriter(s.addFrame)
	return s
}

// Live makes the Segmenter cut a live stream: its first segment at first
// (0 means the target), so that a player has something to play as early
// as possible, and every segment stored the moment it is cut, never held
// back to join a short last piece, which stays a segment of its own; and
// it calls stored with all segments stored so far after storing each one,
// from within Write or Close, for the caller to publish a live playlist
// (EventPlaylist). An error from stored ends the stream like a failed put.
// Call Live before the first Write.
func (s *Segmenter) Live(first time.Duration, stored func(segments []Segment) error) {
	s.live = true
	s.first = first
	s.stored = stored
}

// Write consumes MP3 bytes. It returns an error if storing a segment failed.
func (s *Segmenter) Write(p []byte) (int, error) {
	if s.closed {
		return 0, errors.New("hls: write to closed Segmenter")
	}
	n, err := s.frames.Write(p)
	if err != nil {
		return n, fmt.Errorf("hls segment: %w", err)
	}
	return n, nil
}

// Close ends the stream, stores the last segments, and returns the VOD
// playlist. It returns an error if the stream held no audio frame.
func (s *Segmenter) Close() (playlist []byte, err error) {
	if s.closed {
		return nil, errors.New("hls: Segmenter closed twice")
	}
	s.closed = true
	if err := s.frames.Close(); err != nil {
		return nil, fmt.Errorf("hls segment: %w", err)
	}
	if s.samples == 0 {
		return nil, errors.New("hls segment: no MP3 audio frame in stream")
	}
	s.flushPES()
	if cur := s.cur; cur != nil && cur.samples > 0 {
		s.cur = nil
		if s.prev != nil && s.dur(cur.samples) < s.target/2 {
			s.prev.data = append(s.prev.data, cur.data...)
			s.prev.samples += cur.samples
		} else if err := s.finish(cur); err != nil {
			return nil, err
		}
	}
	if s.prev != nil {
		if err := s.store(s.prev); err != nil {
			return nil, err
		}
		s.prev = nil
	}
	return Playlist(s.segments), nil
}

// Segments returns the segments stored so far.
func (s *Segmenter) Segments() []Segment {
	return append([]Segment(nil), s.segments...)
}

func (s *Segmenter) dur(samples int64) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(s.rate))
}

// addFrame is the FrameWriter's callback.
func (s *Segmenter) addFrame(f mp3.Frame) error {
	if s.rate == 0 {
		s.rate = f.SampleRate
	}
	// The first segment of a live stream is cut short.
	target := s.target
	if s.first > 0 && len(s.segments) == 0 {
		target = s.first
	}
	if s.cur == nil {
		// Room for the segment at this frame's bitrate, with the transport
		// stream's overhead (under 10 %), so that it is not grown by
		// doubling.
		room := int(target.Seconds()*float64(f.Bitrate)/8*1.1) + 4<<10
		s.cur = &pending{data: make([]byte, 0, room)}
		s.ts.writeTables()
	}
	if len(s.pes) > 0 && len(s.pes)+len(f.Data) > maxPESPayload {
		s.flushPES()
	}
	if len(s.pes) == 0 {
		s.pesStart = s.samples
	}
	s.pes = append(s.pes, f.Data...)
	s.samples += int64(f.Samples)
	s.cur.samples += int64(f.Samples)
	if s.dur(s.cur.samples) < target {
		return nil
	}
	s.flushPES()
	cur := s.cur
	s.cur = nil
	if s.live {
		// A live stream's segments are stored at once, for players
		// close behind.
		return s.store(cur)
	}
	return s.finish(cur)
}

// flushPES writes the waiting frames as one PES packet into the current
// segment.
func (s *Segmenter) flushPES() {
	if len(s.pes) == 0 {
		return
	}
	pts := ptsOffset + s.pesStart*clockRate/int64(s.rate)
	s.ts.writePES(pts, s.pes)
	s.pes = s.pes[:0]
	s.cur.data = append(s.cur.data, s.ts.buf...)
	s.ts.buf = s.ts.buf[:0]
}

// finish takes a full segment: it stores the one held back and holds this
// one back instead.
func (s *Segmenter) finish(p *pending) error {
	if s.prev != nil {
		if err := s.store(s.prev); err != nil {
			return err
		}
	}
	s.prev = p
	return nil
}

func (s *Segmenter) store(p *pending) error {
	seg := Segment{
		Name: SegmentName(len(s.segments)), Samples: p.samples,
		SampleRate: s.rate, Size: len(p.data),
	}
	if err := s.put(seg.Name, p.data); err != nil {
		return fmt.Errorf("hls: store %s: %w", seg.Name, err)
	}
	s.segments = append(s.segments, seg)
	if s.stored != nil {
		if err := s.stored(s.Segments()); err != nil {
			return fmt.Errorf("hls: after storing %s: %w", seg.Name, err)
		}
	}
	return nil
}

// Package reads the MP3 stream r to its end, stores its segments with put,
// and returns the VOD playlist, which refers to the segments by their names.
// target is the segment duration to aim for (0 means DefaultTarget). It
// stops early if ctx is cancelled.
func Package(ctx context.Context, r io.Reader, target time.Duration, put PutFunc) (playlist []byte, err error) {
	s := NewSegmenter(target, put)
	if _, err := io.Copy(s, ctxio.Reader(ctx, r)); err != nil {
		return nil, fmt.Errorf("package hls: %w", err)
	}
	playlist, err = s.Close()
	if err != nil {
		return nil, fmt.Errorf("package hls: %w", err)
	}
	return playlist, nil
}

// Playlist returns the VOD playlist (version 3) of segments. EXTINF values
// have microsecond precision and are rounded cumulatively, so that they add
// up to the total duration rounded to the microsecond.
// EXT-X-TARGETDURATION is the longest EXTINF rounded up.
func Playlist(segments []Segment) []byte {
	durations, longest := extinfs(segments)
	return appendPlaylist(nil, "VOD", int64(math.Ceil(float64(longest)/1e6)), segments, durations, true)
}

// EventPlaylist returns the live playlist (version 3, EXT-X-PLAYLIST-TYPE
// EVENT) of the segments a Segmenter with the given target has stored so
// far, the first ones of the stream, which later versions only extend.
// When ended, it closes with EXT-X-ENDLIST: the stream is complete and the
// playlist lists the same segments, with the same EXTINF values, as the
// VOD playlist. Players reload a playlist without EXT-X-ENDLIST, so it
// must be served uncached. Its EXT-X-TARGETDURATION, which must not change
// from one version to the next, is LiveTargetDuration(target) throughout.
func EventPlaylist(segments []Segment, target time.Duration, ended bool) []byte {
	durations, _ := extinfs(segments)
	return appendPlaylist(nil, "EVENT", LiveTargetDuration(target), segments, durations, ended)
}

// LiveTargetDuration is the EXT-X-TARGETDURATION of a live playlist, in
// seconds: a bound on every segment a live Segmenter with the given target
// (0 means DefaultTarget) can cut, known before the first one. A segment
// lasts less than the target plus one frame (at most 1152 samples at
// 8 kHz, 0.144 s).
func LiveTargetDuration(target time.Duration) int64 {
	if target <= 0 {
		target = DefaultTarget
	}
	return int64(math.Ceil((target + 144*time.Millisecond).Seconds()))
}

// extinfs returns the EXTINF value of each segment and the longest, in
// microseconds.
func extinfs(segments []Segment) (durations []int64, longest int64) {
	durations = make([]int64, len(segments)) // microseconds
	var total, prevUS int64
	for i, seg := range segments {
		total += seg.Samples * 1_000_000 // in µs × rate
		us := (total + int64(seg.SampleRate)/2) / int64(seg.SampleRate)
		durations[i] = us - prevUS
		prevUS = us
		longest = max(longest, durations[i])
	}
	return durations, longest
}

// appendPlaylist appends a media playlist of the given type to b.
func appendPlaylist(b []byte, kind string, targetSeconds int64, segments []Segment, durations []int64, end bool) []byte {
	b = append(b, "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:"...)
	b = strconv.AppendInt(b, targetSeconds, 10)
	b = append(b, "\n#EXT-X-PLAYLIST-TYPE:"...)
	b = append(b, kind...)
	b = append(b, "\n#EXT-X-MEDIA-SEQUENCE:0\n"...)
	for i, seg := range segments {
		b = fmt.Appendf(b, "#EXTINF:%d.%06d,\n%s\n", durations[i]/1e6, durations[i]%1e6, seg.Name)
	}
	if end {
		b = append(b, "#EXT-X-ENDLIST\n"...)
	}
	return b
}
