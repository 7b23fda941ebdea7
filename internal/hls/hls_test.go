package hls_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asticode/go-astits"

	"github.com/narrator/narrator/internal/hls"
	"github.com/narrator/narrator/internal/mp3"
	"github.com/narrator/narrator/internal/proctest"
)

const rate = 32000

// signal returns d of a 440 Hz tone broken by speech-like pauses.
func signal(d time.Duration) []int16 {
	n := int(int64(d) * rate / int64(time.Second))
	s := make([]int16, n)
	for i := range s {
		if (i/(rate/2))%4 == 3 { // every 4th half second is silent
			continue
		}
		s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
	}
	return s
}

// mustEncode encodes samples with the real lame and returns the MP3.
func mustEncode(tb testing.TB, samples []int16) []byte {
	tb.Helper()
	proctest.NeedProgram(tb, "lame", "apt-get install lame")
	var out bytes.Buffer
	enc, err := mp3.NewEncoder(tb.Context(), &out, mp3.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := enc.Write(samples); err != nil {
		tb.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// encoding is an MP3 encoder whose output a segmenter packages as it
// comes, as the pipeline has them; the MP3 is kept too.
type encoding struct {
	*mp3.Encoder
	seg *hls.Segmenter
	mp3 bytes.Buffer
}

// newEncoding starts an encoding whose segments, of 6 s, go to put.
func newEncoding(t *testing.T, put hls.PutFunc) *encoding {
	t.Helper()
	e := &encoding{seg: hls.NewSegmenter(6*time.Second, put)}
	enc, err := mp3.NewEncoder(t.Context(), io.MultiWriter(&e.mp3, e.seg), mp3.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Encoder = enc
	return e
}

// finish closes the encoder, then the segmenter, and returns the playlist.
func (e *encoding) finish(t *testing.T) []byte {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	playlist, err := e.seg.Close()
	if err != nil {
		t.Fatal(err)
	}
	return playlist
}

// store is a PutFunc target that keeps segments in memory.
type store struct {
	mu    sync.Mutex
	names []string
	files map[string][]byte
}

func (s *store) put(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string][]byte{}
	}
	if _, ok := s.files[name]; ok {
		return errors.New("segment stored twice: " + name)
	}
	s.names = append(s.names, name)
	s.files[name] = data
	return nil
}

// mustPackage packages data and returns the playlist and the segments.
func mustPackage(tb testing.TB, data []byte, target time.Duration) ([]byte, *store) {
	tb.Helper()
	var st store
	playlist, err := hls.Package(tb.Context(), bytes.NewReader(data), target, st.put)
	if err != nil {
		tb.Fatal(err)
	}
	return playlist, &st
}

type entry struct {
	uri      string
	duration time.Duration
}

// parsePlaylist checks the VOD playlist's tags and returns its entries and
// target duration.
func parsePlaylist(tb testing.TB, playlist []byte) (entries []entry, target int) {
	tb.Helper()
	lines := strings.Split(strings.TrimSuffix(string(playlist), "\n"), "\n")
	wantHead := []string{"#EXTM3U", "#EXT-X-VERSION:3"}
	for i, w := range wantHead {
		if lines[i] != w {
			tb.Fatalf("playlist line %d = %q, want %q\n%s", i+1, lines[i], w, playlist)
		}
	}
	if lines[len(lines)-1] != "#EXT-X-ENDLIST" {
		tb.Fatalf("playlist does not end with #EXT-X-ENDLIST:\n%s", playlist)
	}
	seen := map[string]bool{}
	var pending *time.Duration
	for _, line := range lines[2 : len(lines)-1] {
		switch {
		case strings.HasPrefix(line, "#EXT-X-TARGETDURATION:"):
			target, _ = strconv.Atoi(strings.TrimPrefix(line, "#EXT-X-TARGETDURATION:"))
			seen["target"] = true
		case line == "#EXT-X-PLAYLIST-TYPE:VOD":
			seen["vod"] = true
		case line == "#EXT-X-MEDIA-SEQUENCE:0":
			seen["seq"] = true
		case strings.HasPrefix(line, "#EXTINF:"):
			v := strings.TrimSuffix(strings.TrimPrefix(line, "#EXTINF:"), ",")
			if dot := strings.IndexByte(v, '.'); dot < 0 || len(v)-dot-1 < 3 {
				tb.Errorf("EXTINF %q: want 3 or more decimals", v)
			}
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("EXTINF %q: %v", v, err)
			}
			d := time.Duration(math.Round(secs*1e6) * 1e3)
			pending = &d
		case strings.HasPrefix(line, "#"):
			tb.Errorf("unexpected playlist line %q", line)
		default:
			if pending == nil {
				tb.Fatalf("URI %q without EXTINF", line)
			}
			entries = append(entries, entry{line, *pending})
			pending = nil
		}
	}
	for _, tag := range []string{"target", "vod", "seq"} {
		if !seen[tag] {
			tb.Errorf("playlist lacks its %s tag:\n%s", tag, playlist)
		}
	}
	return entries, target
}

// pes is one PES packet found in a segment.
type pes struct {
	pts     int64
	samples int64
	data    []byte
}

// demux parses a segment with go-astits and checks its tables, continuity
// counters and PCRs; it returns the PES packets of the audio stream.
func demux(tb testing.TB, name string, seg []byte, cc map[uint16]int) []pes {
	tb.Helper()
	if len(seg)%188 != 0 {
		tb.Fatalf("%s: %d bytes, not whole TS packets", name, len(seg))
	}
	// Continuity counters run on across segments, per PID.
	for off := 0; off < len(seg); off += 188 {
		p := seg[off : off+188]
		if p[0] != 0x47 {
			tb.Fatalf("%s: packet %d has no sync byte", name, off/188)
		}
		pid := uint16(p[1]&0x1F)<<8 | uint16(p[2])
		c := int(p[3] & 0x0F)
		if prev, ok := cc[pid]; ok && c != (prev+1)%16 {
			tb.Errorf("%s: packet %d on PID %#x has continuity counter %d after %d", name, off/188, pid, c, prev)
		}
		cc[pid] = c
	}

	dmx := astits.NewDemuxer(tb.Context(), bytes.NewReader(seg))
	var out []pes
	var audioPID uint16
	for {
		d, err := dmx.NextData()
		if errors.Is(err, astits.ErrNoMorePackets) {
			break
		}
		if err != nil {
			tb.Fatalf("%s: demux: %v", name, err)
		}
		switch {
		case d.PAT != nil:
			if len(d.PAT.Programs) != 1 {
				tb.Errorf("%s: PAT has %d programs, want 1", name, len(d.PAT.Programs))
			}
		case d.PMT != nil:
			if len(d.PMT.ElementaryStreams) != 1 {
				tb.Fatalf("%s: PMT has %d streams, want 1", name, len(d.PMT.ElementaryStreams))
			}
			es := d.PMT.ElementaryStreams[0]
			if es.StreamType != 0x03 {
				tb.Errorf("%s: stream type %#x, want 0x03 (MPEG-1 audio)", name, es.StreamType)
			}
			if d.PMT.PCRPID != es.ElementaryPID {
				tb.Errorf("%s: PCR PID %#x, want the audio PID %#x", name, d.PMT.PCRPID, es.ElementaryPID)
			}
			audioPID = es.ElementaryPID
		case d.PES != nil:
			if audioPID == 0 || d.PID != audioPID {
				tb.Fatalf("%s: PES on PID %#x before the PMT announced it", name, d.PID)
			}
			if d.PES.Header.StreamID != 0xC0 {
				tb.Errorf("%s: PES stream id %#x, want 0xC0", name, d.PES.Header.StreamID)
			}
			oh := d.PES.Header.OptionalHeader
			if oh == nil || oh.PTS == nil {
				tb.Fatalf("%s: PES without PTS", name)
			}
			af := d.FirstPacket.AdaptationField
			if af == nil || !af.HasPCR {
				tb.Errorf("%s: PES at PTS %d starts without a PCR", name, oh.PTS.Base)
			} else if pcr := af.PCR.Base; pcr > oh.PTS.Base {
				tb.Errorf("%s: PCR %d after PTS %d", name, pcr, oh.PTS.Base)
			}
			info, err := mp3.Scan(bytes.NewReader(d.PES.Data))
			if err != nil {
				tb.Fatal(err)
			}
			if info.Skipped != 0 || info.Frames == 0 {
				tb.Errorf("%s: PES payload is not whole MP3 frames: %+v", name, info)
			}
			out = append(out, pes{oh.PTS.Base, info.Samples, d.PES.Data})
		}
	}
	return out
}

// check validates a packaged MP3: playlist, segment durations, TS structure,
// PTS continuity, and that the frames in the segments are the MP3's frames.
func check(tb testing.TB, data, playlist []byte, st *store, target time.Duration) []entry {
	tb.Helper()
	info, err := mp3.Scan(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	entries, targetDuration := parsePlaylist(tb, playlist)
	if len(entries) != len(st.names) {
		tb.Fatalf("playlist lists %d segments, %d were stored", len(entries), len(st.names))
	}
	var sum, longest time.Duration
	for i, e := range entries {
		if want := hls.SegmentName(i); e.uri != want || st.names[i] != want {
			tb.Errorf("segment %d is %q (stored %q), want %q", i, e.uri, st.names[i], want)
		}
		sum += e.duration
		longest = max(longest, e.duration)
		last := i == len(entries)-1
		if !last && (e.duration < target || e.duration > target+target*2/3) {
			tb.Errorf("segment %d lasts %v, want %v to %v", i, e.duration, target, target+target*2/3)
		}
		if last && len(entries) > 1 && (e.duration < target/2 || e.duration > target+target*2/3) {
			tb.Errorf("last segment lasts %v, want %v to %v", e.duration, target/2, target+target*2/3)
		}
	}
	if want := int(math.Ceil(longest.Seconds())); targetDuration != want {
		tb.Errorf("EXT-X-TARGETDURATION %d, want %d", targetDuration, want)
	}
	// The EXTINF values add up to the MP3's duration, to the microsecond.
	if d := info.Duration(); (sum - d).Abs() > time.Microsecond {
		tb.Errorf("EXTINF sum %v, MP3 duration %v", sum, d)
	}

	cc := map[uint16]int{}
	var frames []byte
	var samples int64
	for i, name := range st.names {
		packets := demux(tb, name, st.files[name], cc)
		var segSamples int64
		for _, p := range packets {
			if want := 126000 + samples*90000/rate; p.pts != want {
				tb.Fatalf("%s: PTS %d, want %d (%d samples in)", name, p.pts, want, samples)
			}
			samples += p.samples
			segSamples += p.samples
			frames = append(frames, p.data...)
		}
		if got, want := time.Duration(segSamples)*time.Second/rate, entries[i].duration; (got - want).Abs() > time.Microsecond {
			tb.Errorf("%s holds %v of audio, EXTINF says %v", name, got, want)
		}
	}
	if !bytes.Equal(frames, data) {
		tb.Errorf("segments carry %d bytes of MP3 frames, want the %d bytes of the MP3", len(frames), len(data))
	}
	return entries
}

func TestPackage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		audio        time.Duration
		target       time.Duration
		wantSegments int
	}{
		{"shorter than half the target", 2 * time.Second, 6 * time.Second, 1},
		{"one and a bit", 7 * time.Second, 6 * time.Second, 1 + 0}, // 1 s rest joins the first
		{"rest kept", 10 * time.Second, 6 * time.Second, 2},
		{"several", 40 * time.Second, 6 * time.Second, 7},
		{"default target", 20 * time.Second, 0, 3},
		{"short target", 5 * time.Second, time.Second, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := mustEncode(t, signal(tt.audio))
			playlist, st := mustPackage(t, data, tt.target)
			target := tt.target
			if target == 0 {
				target = hls.DefaultTarget
			}
			entries := check(t, data, playlist, st, target)
			if len(entries) != tt.wantSegments {
				t.Errorf("%d segments, want %d:\n%s", len(entries), tt.wantSegments, playlist)
			}
		})
	}
}

// TestSegmenterBehindEncoder packages while encoding, as the pipeline does,
// and checks the result with ffmpeg, which must play it without an error.
func TestSegmenterBehindEncoder(t *testing.T) {
	t.Parallel()
	proctest.NeedProgram(t, "lame", "apt-get install lame")
	proctest.NeedProgram(t, "ffmpeg", "apt-get install ffmpeg")
	dir := t.TempDir()
	put := func(name string, data []byte) error {
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	enc := newEncoding(t, put)
	samples := signal(25 * time.Second)
	for len(samples) > 0 {
		n := min(len(samples), 4096)
		if err := enc.Write(samples[:n]); err != nil {
			t.Fatal(err)
		}
		samples = samples[n:]
	}
	playlist := enc.finish(t)
	path := filepath.Join(dir, hls.PlaylistName)
	if err := os.WriteFile(path, playlist, 0o644); err != nil {
		t.Fatal(err)
	}
	st := &store{files: map[string][]byte{}}
	for _, s := range enc.seg.Segments() {
		b, err := os.ReadFile(filepath.Join(dir, s.Name))
		if err != nil {
			t.Fatal(err)
		}
		st.names = append(st.names, s.Name)
		st.files[s.Name] = b
		if s.Size != len(b) {
			t.Errorf("%s: Size %d, file has %d bytes", s.Name, s.Size, len(b))
		}
	}
	check(t, enc.mp3.Bytes(), playlist, st, 6*time.Second)

	// ffmpeg reads the playlist as a player would: no error, no warning,
	// and the whole duration.
	cmd := exec.CommandContext(t.Context(), "ffmpeg", "-nostdin", "-v", "warning", "-i", path, "-f", "null", "-")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("ffmpeg playing the playlist: %v\n%s", err, out)
	}
	probe, err := exec.CommandContext(t.Context(), "ffprobe", "-v", "error", "-count_packets",
		"-show_entries", "stream=codec_name,sample_rate,channels,nb_read_packets", "-of", "default=nw=1", path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	info, err := mp3.Scan(bytes.NewReader(enc.mp3.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := "codec_name=mp3\nsample_rate=" + strconv.Itoa(rate) + "\nchannels=1\nnb_read_packets=" + strconv.Itoa(info.Frames) + "\n"
	// The HLS demuxer lists the stream twice: in its program and alone.
	if !strings.HasPrefix(string(probe), want) {
		t.Errorf("ffprobe of the playlist:\n%s\nwant:\n%s", probe, want)
	}
}

func TestPackageErrors(t *testing.T) {
	t.Parallel()
	data := mustEncode(t, signal(20*time.Second))
	boom := errors.New("disk full")
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		in   []byte
		put  hls.PutFunc
		want error
	}{
		{"no audio", t.Context(), []byte("hello, not an mp3"), func(string, []byte) error { return nil }, nil},
		{"put fails", t.Context(), data, func(string, []byte) error { return boom }, boom},
		{"cancelled", cancelled, data, func(string, []byte) error { return nil }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			playlist, err := hls.Package(tt.ctx, bytes.NewReader(tt.in), 6*time.Second, tt.put)
			if err == nil {
				t.Fatalf("Package = %q, want an error", playlist)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Package error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPlaylistExactSum(t *testing.T) {
	t.Parallel()
	// 1000 segments of 263 frames at 44.1 kHz: EXTINF rounding must not
	// accumulate.
	const rate = 44100
	segs := make([]hls.Segment, 1000)
	for i := range segs {
		segs[i] = hls.Segment{Name: hls.SegmentName(i), Samples: 263 * 1152, SampleRate: rate}
	}
	entries, target := parsePlaylist(t, hls.Playlist(segs))
	var sum time.Duration
	for _, e := range entries {
		sum += e.duration
	}
	want := time.Duration(1000*263*1152) * time.Second / rate
	if (sum - want).Abs() > time.Microsecond {
		t.Errorf("EXTINF sum %v, want %v", sum, want)
	}
	if target != 7 {
		t.Errorf("target duration %d, want 7", target)
	}
	sc := bufio.NewScanner(bytes.NewReader(hls.Playlist(segs[:1])))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	want1 := []string{"#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:7", "#EXT-X-PLAYLIST-TYPE:VOD",
		"#EXT-X-MEDIA-SEQUENCE:0", "#EXTINF:6.870204,", "seg-00000.ts", "#EXT-X-ENDLIST"}
	if strings.Join(lines, "\n") != strings.Join(want1, "\n") {
		t.Errorf("playlist:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want1, "\n"))
	}
}
