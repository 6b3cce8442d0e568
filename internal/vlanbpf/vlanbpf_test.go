package vlanbpf

import (
	"testing"

	"golang.org/x/net/bpf"
)

// Every program Filter builds assembles, and each of its jumps lands on
// an instruction of the program, whatever after adds: the skips are
// counted, not written by hand. (What the programs pass is tested where
// they are used: nexthop runs its agent's filter on tagged frames, with
// the outer tag in the frame and in the metadata.)
func TestFilterJumpsLand(t *testing.T) {
	accept := func(uint32) []bpf.Instruction { return []bpf.Instruction{bpf.RetConstant{Val: Accept}} }
	long := func(off uint32) []bpf.Instruction {
		return []bpf.Instruction{
			bpf.LoadAbsolute{Off: off, Size: 2},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x0806, SkipTrue: 1},
			bpf.RetConstant{Val: Reject},
			bpf.RetConstant{Val: Accept},
		}
	}
	for _, tags := range [][]Tag{nil, {{0x8100, 100}}, {{0x88a8, 10}, {0x8100, 100}}} {
		for _, after := range []func(uint32) []bpf.Instruction{accept, long} {
			p := Filter(tags, after)
			if _, err := bpf.Assemble(p); err != nil {
				t.Fatalf("%v: %v", tags, err)
			}
			for i, in := range p {
				if j, ok := in.(bpf.JumpIf); ok {
					if i+1+int(j.SkipTrue) >= len(p) || i+1+int(j.SkipFalse) >= len(p) {
						t.Errorf("%v: the jump at %d (%+v) leaves the program of %d", tags, i, j, len(p))
					}
				}
			}
			if r, ok := p[len(p)-1].(bpf.RetConstant); !ok || r.Val != Reject {
				t.Errorf("%v: the program ends in %v, not the reject", tags, p[len(p)-1])
			}
		}
	}
}
