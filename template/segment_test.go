package template

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/frame"
)

// renderLimited renders everything the source of o sends, as the engine
// does: at most limit frames when limited (the engine's share of a
// --count), else until the source ends. It returns the frames and the
// source's per-stream counts.
func renderLimited(t *testing.T, s *Spec, o CompileOptions, limited bool, limit uint64) ([][]byte, []uint64) {
	t.Helper()
	src, err := Compile(s, o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out [][]byte
	bufs := make([][]byte, 64)
	lens := make([]int, 64)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	for {
		want := len(bufs)
		if limited {
			want = int(min(uint64(want), limit-uint64(len(out))))
			if want == 0 {
				break
			}
		}
		m := src.Render(bufs[:want], lens, 0)
		for i := range m {
			out = append(out, append([]byte(nil), bufs[i][:lens[i]]...))
		}
		if m < want {
			break
		}
		if len(out) > 1<<22 {
			t.Fatal("the source does not end")
		}
	}
	return out, src.StreamFrames()
}

// share is the engine's split of a count over workers.
func share(total uint64, i, w int) uint64 {
	n := total / uint64(w)
	if uint64(i) < total%uint64(w) {
		n++
	}
	return n
}

// TestPickCountsMatchesRender checks the interleaving segmentCaps
// replays against what a source renders under a --count: random shares,
// streams' counts (some run out before the count ends, some after), and
// several workers.
func TestPickCountsMatchesRender(t *testing.T) {
	r := rand.New(rand.NewSource(25))
	for trial := range 60 {
		n := 1 + r.Intn(6)
		var b strings.Builder
		b.WriteString("streams:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - name: s%d\n    share: %d\n    ipv4: {src: 198.18.0.%d, dst: 198.19.0.1}\n    udp: {src: {from: 1, to: 7}, dst: 9}\n", i, 1+r.Intn(5), i+1)
			if r.Intn(2) == 0 {
				fmt.Fprintf(&b, "    count: %d\n", 1+r.Intn(300))
			}
		}
		s, err := Parse("t.wpg.yaml", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		count := uint64(1 + r.Intn(1500))
		W := 1 + r.Intn(3)
		for w := range W {
			o := CompileOptions{Worker: w, Workers: W, Count: count, Plan: PlanStream}
			_, rendered := renderLimited(t, s, o, true, share(count, w, W))
			shares := make([]int64, n)
			left := make([]uint64, n)
			unlimited := make([]bool, n)
			for i, st := range s.Streams {
				shares[i] = int64(st.Share)
				if st.Count == 0 {
					unlimited[i] = true
				} else if st.Count > uint64(w) {
					left[i] = (st.Count - uint64(w) + uint64(W) - 1) / uint64(W)
				}
			}
			picks, err := pickCounts(shares, left, unlimited, share(count, w, W))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(picks, rendered) {
				t.Fatalf("trial %d worker %d/%d count %d:\n%s\npickCounts %v, rendered %v", trial, w, W, count, b.String(), picks, rendered)
			}
		}
	}
}

// TestSegmentsSendOneRun renders N segments of W workers each and checks
// that together they render exactly one unsegmented run of W workers:
// every signed frame (keyed by stream and sequence number) once and the
// same but for the sender count, the same frames of each stream, with
// and without a --count, for the examples with several streams, varying
// sizes, random fields and IP fragments, streamed and prerendered; and
// that each segment's signature names W·N senders.
func TestSegmentsSendOneRun(t *testing.T) {
	type key struct {
		stream uint16
		seq    uint64
	}
	for _, c := range []struct {
		file  string
		count uint64
		W, N  int
		plan  string
	}{
		{"../examples/udp64.wpg.yaml", 30000, 1, 3, PlanAuto},
		{"../examples/mixed.wpg.yaml", 30000, 1, 3, PlanAuto},
		{"../examples/mixed.wpg.yaml", 9997, 2, 3, PlanStream},
		{"../examples/mixed.wpg.yaml", 1001, 3, 2, PlanPrerender},
		{"../examples/mixed.wpg.yaml", 2, 1, 3, PlanAuto}, // segments with nothing to do
		{"../examples/fragments.wpg.yaml", 3001, 1, 3, PlanAuto},
		{"../examples/fragments.wpg.yaml", 1003, 2, 2, PlanAuto},
		{"../examples/stream-rates.wpg.yaml", 0, 1, 2, PlanAuto},
		{"../examples/syn-sweep.wpg.yaml", 5000, 1, 4, PlanStream},
	} {
		name := fmt.Sprintf("%s/count=%d/W=%d/N=%d/%s", c.file[len("../examples/"):], c.count, c.W, c.N, c.plan)
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, c.file)
			one := map[key][]byte{}
			var oneStreams []uint64
			var unsigned int
			for w := range c.W {
				fs, st := renderLimited(t, s, CompileOptions{Worker: w, Workers: c.W, Count: c.count, Plan: c.plan}, c.count > 0, share(c.count, w, c.W))
				oneStreams = addCounts(oneStreams, st)
				for _, f := range fs {
					sig, ok := frame.ParseSignature(f)
					if !ok {
						unsigned++
						continue
					}
					k := key{sig.Stream, sig.Seq}
					if one[k] != nil {
						t.Fatalf("unsegmented: %v twice", k)
					}
					one[k] = f
				}
			}
			var segStreams []uint64
			seen := map[key]bool{}
			segUnsigned := 0
			for i := range c.N {
				var total uint64
				for w := range c.W {
					o := CompileOptions{Worker: w, Workers: c.W, Segment: i, Segments: c.N, Count: c.count, Plan: c.plan}
					fs, st := renderLimited(t, s, o, false, 0) // the caps end a segment's sources
					segStreams = addCounts(segStreams, st)
					total += uint64(len(fs))
					for _, f := range fs {
						sig, ok := frame.ParseSignature(f)
						if !ok {
							segUnsigned++
							continue
						}
						k := key{sig.Stream, sig.Seq}
						if sig.Workers != c.W*c.N {
							t.Fatalf("segment %d: %v names %d senders, want %d", i, k, sig.Workers, c.W*c.N)
						}
						if lane := int(sig.Seq % uint64(c.W*c.N)); lane != w+c.W*i {
							t.Fatalf("segment %d worker %d: %v is in lane %d", i, w, k, lane)
						}
						if seen[k] {
							t.Fatalf("segment %d: %v sent twice", i, k)
						}
						seen[k] = true
						if one[k] == nil || !sameFrame(one[k], f) {
							t.Fatalf("segment %d: %v differs from the unsegmented run's:\n%x\n%x", i, k, one[k], f)
						}
					}
				}
				want, limited, err := SegmentFrames(s, CompileOptions{Workers: c.W, Segment: i, Segments: c.N, Count: c.count, Plan: c.plan})
				if err != nil || !limited || want != total {
					t.Errorf("segment %d: SegmentFrames %d, %v, %v; it sent %d", i, want, limited, err, total)
				}
				if c.count > 0 && c.count%uint64(c.N) == 0 && c.W == 1 && hasEvenShares(s, c.count/uint64(c.N)) && total != c.count/uint64(c.N) {
					t.Errorf("segment %d sent %d, want %d", i, total, c.count/uint64(c.N))
				}
			}
			if len(seen) != len(one) || segUnsigned != unsigned {
				t.Fatalf("segments sent %d signed and %d unsigned frames, one run %d and %d", len(seen), segUnsigned, len(one), unsigned)
			}
			if !slices.Equal(segStreams, oneStreams) {
				t.Fatalf("per stream: segments %v, one run %v", segStreams, oneStreams)
			}
		})
	}
}

func addCounts(a, b []uint64) []uint64 {
	if a == nil {
		a = make([]uint64, len(b))
	}
	for i := range b {
		a[i] += b[i]
	}
	return a
}

// hasEvenShares reports whether n frames are whole periods of the
// streams' shares (each segment then sends exactly n).
func hasEvenShares(s *Spec, n uint64) bool {
	var total uint64
	for _, st := range s.Streams {
		if st.Count > 0 {
			return false
		}
		total += uint64(st.Share)
	}
	return n%total == 0
}

// TestSegmentsReplay splits a capture replayed with its own timing,
// signed and looped by a count (wpg send --pcap --count): the segments'
// frames are the unsegmented run's.
func TestSegmentsReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.pcap")
	writeCapture(t, path, captureFrames(t, 30), false)
	spec := func() *Spec {
		s := ReplaySpec(path, true, 1)
		s.Streams[0].Signature = true
		s.Streams[0].Count = 100
		return s
	}
	one := map[uint64][]byte{}
	fs, _ := renderLimited(t, spec(), CompileOptions{Count: 100}, true, 100)
	for _, f := range fs {
		sig, _ := frame.ParseSignature(f)
		one[sig.Seq] = f
	}
	got := 0
	for i := range 3 {
		fs, _ := renderLimited(t, spec(), CompileOptions{Count: 100, Segment: i, Segments: 3}, false, 0)
		if want := []int{34, 33, 33}[i]; len(fs) != want {
			t.Errorf("segment %d: %d frames, want %d", i, len(fs), want)
		}
		for _, f := range fs {
			sig, ok := frame.ParseSignature(f)
			if !ok || !sameFrame(one[sig.Seq], f) || sig.Seq%3 != uint64(i) {
				t.Fatalf("segment %d: frame %d differs from the unsegmented run's", i, sig.Seq)
			}
			got++
		}
	}
	if got != len(one) || len(one) != 100 {
		t.Fatalf("segments sent %d, one run %d", got, len(one))
	}
}

// TestSegmentOptions refuses segments out of range, more senders than
// the signature names, and a --count over streams that keep their own
// schedules.
func TestSegmentOptions(t *testing.T) {
	s := mustLoad(t, "../examples/udp64.wpg.yaml")
	for _, o := range []CompileOptions{
		{Segment: 3, Segments: 3},
		{Segment: -1, Segments: 2},
		{Workers: 4, Segments: 65},
	} {
		if _, err := Compile(s, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	timed := mustLoad(t, "../examples/stream-rates.wpg.yaml")
	_, err := Compile(timed, CompileOptions{Segments: 2, Count: 100})
	if !errors.Is(err, ErrSegmentCount) {
		t.Errorf("timed streams with --count: %v", err)
	}
	// One segment is the unsegmented run, bit for bit.
	a := render(t, s, CompileOptions{Workers: 2, Worker: 1, Plan: PlanStream}, 100, 7)
	b := render(t, s, CompileOptions{Workers: 2, Worker: 1, Segments: 1, Plan: PlanStream}, 100, 7)
	if !slices.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) }) {
		t.Error("--segment 0/1 differs from no segment")
	}
}

// TestPickCountsBounded refuses an interleaving too long to replay.
func TestPickCountsBounded(t *testing.T) {
	n := 300
	shares := make([]int64, n)
	var total uint64
	for i := range shares {
		shares[i] = 1<<20 - int64(i) // 300 groups of equal share
		total += uint64(shares[i])
	}
	_, err := pickCounts(shares, make([]uint64, n), slices.Repeat([]bool{true}, n), total-1)
	if !errors.Is(err, ErrSegmentCount) {
		t.Fatalf("err = %v", err)
	}
}
