package template

import (
	"errors"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// timedFrame is one frame a timed source rendered: its stream, its index
// in the stream, and its due time.
type timedFrame struct {
	stream int
	seq    uint64
	due    int64
}

// drainTimed runs a timed source as the pacer would, with time jumping to
// each due time: Start(0), then NextDue, DueBy and Render of that many
// frames, until the source ends. It returns the frames in sending order.
func drainTimed(t *testing.T, src *Source, limit int) []timedFrame {
	t.Helper()
	if !src.Timed() {
		t.Fatal("source is not timed")
	}
	const batch = 8
	bufs := make([][]byte, batch)
	lens := make([]int, batch)
	dues := make([]int64, batch)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	src.RecordDues(dues)
	src.Start(0)
	var out []timedFrame
	for len(out) < limit {
		due, ok := src.NextDue()
		if !ok {
			break
		}
		n := src.DueBy(due, batch)
		if n < 1 {
			t.Fatalf("DueBy(%d) = %d with the next frame due then", due, n)
		}
		m := src.Render(bufs[:n], lens[:n], due)
		if m != n {
			t.Fatalf("Render gave %d of %d due frames", m, n)
		}
		for i := range m {
			if dues[i] > due {
				t.Fatalf("frame due at %d rendered at %d", dues[i], due)
			}
			sig, ok := frame.ParseSignature(bufs[i][:lens[i]])
			if !ok {
				t.Fatalf("frame %d has no signature", len(out))
			}
			out = append(out, timedFrame{int(sig.Stream), sig.Seq & (1<<56 - 1), dues[i]})
		}
	}
	return out
}

const timedYAML = `
streams:
  - name: steady
    rate: 1000pps
    count: 20
    ipv4: {}
    udp: {}
  - name: bursts
    rate: 100kpps
    delay: 3ms
    burst: {frames: 4, count: 3, gap: 2ms}
    ipv4: {}
    udp: {dst: 10}
  - name: once
    rate: 1Mbps
    delay: 7500us
    burst: {frames: 5}
    size: 125
    ipv4: {}
    udp: {dst: 11}
`

// TestTimedSchedule: every stream's frames are due exactly at its own
// schedule (a continuous rate, bursts with their gap, a bit rate at the
// stream's frame size, start delays), every stream sends exactly its
// count, and the frames go in the order of their due times.
func TestTimedSchedule(t *testing.T) {
	spec, err := Parse("timed.wpg.yaml", []byte(timedYAML))
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Timed() {
		t.Fatal("spec not timed")
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frames := drainTimed(t, src, 1000)
	want := map[int][]int64{}
	for k := range int64(20) {
		want[0] = append(want[0], k*1_000_000)
	}
	for b := range int64(3) {
		for j := range int64(4) {
			// 10 µs apart; a burst spans 3 × 10 µs, then the 2 ms gap.
			want[1] = append(want[1], 3_000_000+b*(30_000+2_000_000)+j*10_000)
		}
	}
	for j := range int64(5) {
		// 1 Mbit/s of 125-byte frames: 1000 frames/s.
		want[2] = append(want[2], 7_500_000+j*1_000_000)
	}
	got := map[int][]int64{}
	for i, f := range frames {
		if i > 0 && f.due < frames[i-1].due {
			t.Fatalf("frame %d due at %d after a frame due at %d", i, f.due, frames[i-1].due)
		}
		if uint64(len(got[f.stream])) != f.seq {
			t.Fatalf("stream %d: frame %d has seq %d", f.stream, len(got[f.stream]), f.seq)
		}
		got[f.stream] = append(got[f.stream], f.due)
	}
	for s, w := range want {
		if len(got[s]) != len(w) {
			t.Fatalf("stream %d: %d frames, want %d", s, len(got[s]), len(w))
		}
		for k := range w {
			if d := got[s][k] - w[k]; d < -1 || d > 1 {
				t.Errorf("stream %d frame %d due at %d ns, want %d", s, k, got[s][k], w[k])
			}
		}
	}
	if c := src.StreamFrames(); c[0] != 20 || c[1] != 12 || c[2] != 5 {
		t.Errorf("StreamFrames %v, want [20 12 5]", c)
	}
	// 1000 + 4 frames per 2.03 ms + 1000 frames/s.
	if fps := src.FramesPerSecond(); fps < 3970 || fps > 3972 {
		t.Errorf("FramesPerSecond %.1f", fps)
	}
}

// TestTimedWorkersKeepTheSchedule: split over three workers, the frames
// of every stream are due at the same times as with one.
func TestTimedWorkersKeepTheSchedule(t *testing.T) {
	spec, err := Parse("timed.wpg.yaml", []byte(timedYAML))
	if err != nil {
		t.Fatal(err)
	}
	one, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		stream int
		seq    uint64
	}
	ref := map[key]int64{}
	for _, f := range drainTimed(t, one, 1000) {
		ref[key{f.stream, f.seq}] = f.due
	}
	seen := 0
	for w := range 3 {
		src, err := Compile(spec, CompileOptions{Worker: w, Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range drainTimed(t, src, 1000) {
			if d, ok := ref[key{f.stream, f.seq}]; !ok || d != f.due {
				t.Errorf("worker %d: stream %d frame %d due at %d, one worker has %d (%v)", w, f.stream, f.seq, f.due, d, ok)
			}
			if f.seq%3 != uint64(w) {
				t.Errorf("worker %d sent frame %d of stream %d", w, f.seq, f.stream)
			}
			seen++
		}
	}
	if seen != len(ref) {
		t.Errorf("three workers sent %d frames, one %d", seen, len(ref))
	}
}

// TestTimedUnlimitedBursts: burst count 0 repeats the bursts until the
// run stops.
func TestTimedUnlimitedBursts(t *testing.T) {
	spec, err := Parse("t", []byte("streams: [{rate: 1kpps, burst: {frames: 2, count: 0, gap: 10ms}, ipv4: {}, udp: {}}]"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frames := drainTimed(t, src, 10)
	if len(frames) != 10 {
		t.Fatalf("%d frames", len(frames))
	}
	for i, f := range frames {
		want := int64(i/2)*11_000_000 + int64(i%2)*1_000_000
		if f.due != want {
			t.Errorf("frame %d due at %d, want %d", i, f.due, want)
		}
	}
}

// TestTimingErrors: misuse of the timing keys is refused with the key at
// fault and a fix.
func TestTimingErrors(t *testing.T) {
	for _, c := range []struct {
		yaml, path, msg string
	}{
		{"streams: [{rate: 1kpps, ipv4: {}}, {ipv4: {}}]", "streams[1]", "has no rate of its own"},
		{"streams: [{rate: 1kpps, share: 2, ipv4: {}}]", "streams[0].share", "this stream has its own rate"},
		{"streams: [{burst: {frames: 3}, ipv4: {}}]", "streams[0].burst", "needs the stream's own rate"},
		{"streams: [{delay: 1ms, ipv4: {}}]", "streams[0].delay", "needs the stream's own rate"},
		{"streams: [{rate: 1kpps, count: 5, burst: {frames: 3}, ipv4: {}}]", "streams[0].count", "given by the burst"},
		{"streams: [{rate: 1kpps, burst: {frames: 3, count: 2}, ipv4: {}}]", "streams[0].burst", "need a gap"},
		{"streams: [{rate: 1kpps, burst: {frames: 3, gap: 1ms}, ipv4: {}}]", "streams[0].burst.gap", "one burst has no gap"},
		{"streams: [{rate: 1kpps, burst: {frames: 0}, ipv4: {}}]", "streams[0].burst.frames", "sends nothing"},
		{"streams: [{rate: 1kpps, burst: {frames: 2, count: 3, gap: 0s}, ipv4: {}}]", "streams[0].burst.gap", "gap of 0"},
		{"streams: [{rate: max, ipv4: {}}]", "streams[0].rate", "flat out"},
		{"streams: [{rate: 50%, ipv4: {}}]", "streams[0].rate", "share of the link"},
		{"streams: [{rate: 10 apples, ipv4: {}}]", "streams[0].rate", "unknown unit"},
		{"streams: [{rate: 1kpps, delay: soon, ipv4: {}}]", "streams[0].delay", "not a duration"},
		{"streams: [{rate: 1kpps, delay: 48h, ipv4: {}}]", "streams[0].delay", "above the limit"},
		{"streams: [{timing: original, ipv4: {}}]", "streams[0].timing", "replay a capture"},
		{"streams: [{pcap: x.pcap, timing: original, rate: 1kpps}]", "streams[0].rate", "capture's own pace"},
		{"streams: [{pcap: x.pcap, speed: 2}]", "streams[0].speed", "scales the capture's own timing"},
		{"streams: [{pcap: x.pcap, timing: original, speed: 0}]", "streams[0].speed", "not a factor"},
		{"streams: [{pcap: x.pcap, size: 64}]", "streams[0].size", "does not apply to a replayed capture"},
		{"streams: [{pcap: x.pcap, ipv4: {ttl: 3}}]", "streams[0].ipv4", "rewrites only some fields"},
		{"streams: [{pcap: x.pcap, timing: original, burst: {frames: 2}}]", "streams[0].burst", "not a capture's own timing"},
	} {
		_, err := Parse("t.wpg.yaml", []byte(c.yaml))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v, want a template error", c.yaml, err)
			continue
		}
		if e.Path != c.path || !strings.Contains(e.Msg, c.msg) || e.Fix() == "" {
			t.Errorf("%s:\n got %s: %s (fix %q)\nwant %s: …%s…", c.yaml, e.Path, e.Msg, e.Fix(), c.path, c.msg)
		}
	}
}

// TestStreamRateSpellings: a stream's rate: is read by --rate's parser,
// so the spellings of TRex, tc, trafgen and iperf3 (docs/rate.md) mean
// in a template what they mean on the command line.
func TestStreamRateSpellings(t *testing.T) {
	for in, want := range map[string]string{
		"1mpps": "1Mpps", "10gbps": "10Gbps", "1Mbit": "1Mbps", "100mbit": "100Mbps", "10M": "10Mbps", "1Gbit/s": "1Gbps",
	} {
		spec, err := Parse("r.wpg.yaml", []byte("streams:\n  - rate: "+in+"\n    count: 1\n    ipv4: {}\n    udp: {}\n"))
		if err != nil {
			t.Errorf("rate: %s: %v", in, err)
			continue
		}
		if got := spec.Streams[0].Timing.Rate.String(); got != want {
			t.Errorf("rate: %s reads as %s, want %s", in, got, want)
		}
	}
	_, err := Parse("r.wpg.yaml", []byte("streams:\n  - rate: 10MBps\n    count: 1\n    ipv4: {}\n    udp: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "bytes per second") || !strings.Contains(err.Error(), "r.wpg.yaml:2:") {
		t.Errorf("rate: 10MBps: %v; want the byte rate refused at its line", err)
	}
}
