package template

import (
	"math/rand"
	"testing"
)

// naiveSWRR is the stream-by-stream rule the grouped swrr must reproduce.
type naiveSWRR struct {
	active []int
	share  []int64
	cur    []int64
	total  int64
}

func (n *naiveSWRR) next() int {
	best := -1
	for _, i := range n.active {
		n.cur[i] += n.share[i]
		if best < 0 || n.cur[i] > n.cur[best] {
			best = i
		}
	}
	n.cur[best] -= n.total
	return best
}

func (n *naiveSWRR) remove(i int) {
	for j, a := range n.active {
		if a == i {
			n.active = append(n.active[:j], n.active[j+1:]...)
			break
		}
	}
	n.total -= n.share[i]
	for _, a := range n.active {
		n.cur[a] = 0
	}
}

// TestSWRRMatchesNaive checks that the grouped round-robin (item 26: the
// schedule was O(streams × sum(shares))) picks exactly what the
// stream-by-stream rule picks, including after streams leave.
func TestSWRRMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for trial := range 300 {
		ns := 1 + r.Intn(40)
		share := make([]int64, ns)
		var active []int
		for i := range share {
			switch trial % 3 {
			case 0:
				share[i] = 1 + int64(r.Intn(3))
			case 1:
				share[i] = 1 + int64(r.Intn(50))
			default:
				share[i] = []int64{1, 4, 2, 1, 1, 1}[i%6]
			}
			if r.Intn(5) > 0 {
				active = append(active, i)
			}
		}
		if len(active) == 0 {
			continue
		}
		n := &naiveSWRR{active: append([]int(nil), active...), share: share, cur: make([]int64, ns)}
		for _, i := range active {
			n.total += share[i]
		}
		g := newSWRR(active, func(i int) int64 { return share[i] })
		for step := range 2000 {
			if len(n.active) > 1 && r.Intn(200) == 0 {
				i := n.active[r.Intn(len(n.active))]
				n.remove(i)
				g.remove(i, share[i])
			}
			if a, b := n.next(), g.next(); a != b {
				t.Fatalf("trial %d step %d (shares %v): grouped picks %d, stream by stream %d", trial, step, share, b, a)
			}
		}
	}
}

// TestCompileManyStreams compiles the largest template (65,535 streams)
// with equal and with varied shares: before the grouped round-robin, one
// schedule period took 65,535² steps (preview ran for minutes). The
// structural checks below say what keeps it cheap: one group per distinct
// share, and one schedule period of sum(shares) picks.
func TestCompileManyStreams(t *testing.T) {
	const n = 65535
	for _, varied := range []bool{false, true} {
		spec := &Spec{File: "many", Streams: make([]Stream, n)}
		var total int64
		distinct := map[uint32]bool{}
		for i := range spec.Streams {
			st := &spec.Streams[i]
			st.Name, st.Share, st.Signature, st.Size = "s", 1, true, Fix(64)
			if varied && i < 40 {
				st.Share = uint32(1 + i%7)
			}
			st.IPv4 = &IPv4{Src: ip4Src, Dst: ip4Dst, TTL: Fix(64)}
			st.UDP = &UDP{Src: Value{Kind: Increment, From: 1, To: 1000, Step: 1}, Dst: Fix(9)}
			total += int64(st.Share)
			distinct[st.Share] = true
		}
		src, err := Compile(spec, CompileOptions{Plan: PlanStream})
		if err != nil {
			t.Fatal(err)
		}
		if len(src.rr.groups) != len(distinct) {
			t.Errorf("varied=%v: %d round-robin groups for %d distinct shares", varied, len(src.rr.groups), len(distinct))
		}
		if total <= maxSched && int64(len(src.sched)) != total {
			t.Errorf("varied=%v: schedule of %d picks, want sum(shares) = %d", varied, len(src.sched), total)
		}
		if !varied {
			for i, x := range src.sched[:1000] {
				if int(x) != i {
					t.Fatalf("equal shares: pick %d is stream %d, want round-robin order", i, x)
				}
			}
		}
		bufs, lens := make([][]byte, 8), make([]int, 8)
		for i := range bufs {
			bufs[i] = make([]byte, src.MaxFrame())
		}
		if m := src.Render(bufs, lens, 0); m != 8 {
			t.Fatalf("rendered %d frames, want 8", m)
		}
	}
}
