package template

import (
	"math/bits"
	"slices"
)

// Kind says how a Value changes from packet to packet.
type Kind uint8

// Value kinds.
const (
	Fixed     Kind = iota // always From
	Increment             // From, From+Step, … up to To, then From again
	Decrement             // To, To-Step, … down to From, then To again
	List                  // List[0], List[1], … then List[0] again
	Random                // uniform in [From, To] (or a member of List), from Seed and the packet index
	Weighted              // frame sizes List in proportion to Weights, smoothly interleaved (IMIX)
)

var kindNames = [...]string{"fixed", "increment", "decrement", "list", "random", "weighted"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind's name ("increment", …) in JSON and text.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Value is a field value as a function of the stream's packet index k
// (0, 1, 2, … in sending order, whatever the number of workers). Values are
// unsigned integers: MAC addresses are 48-bit, IPv4 addresses 32-bit.
type Value struct {
	Kind     Kind
	From, To uint64 // range, From <= To
	Step     uint64 // Increment/Decrement, >= 1
	// List holds the values of List and Random-over-a-list, and for
	// Weighted the interleaved sequence of one period.
	List []uint64
	// Sizes and Weights describe a Weighted value as written (for display).
	Sizes, Weights []uint64
	Seed           uint64
	// Div, when above 1, holds each value for Div packets: packet k takes
	// the value of step k/Div (a field of a tuple, whose later fields
	// go through all their values first).
	Div uint64 `json:",omitempty"`
}

// Fix returns a Fixed value.
func Fix(v uint64) Value { return Value{Kind: Fixed, From: v, To: v} }

// At returns the value of packet k.
func (v *Value) At(k uint64) uint64 {
	if v.Div > 1 {
		k /= v.Div
	}
	return v.at(k)
}

// at is the value of step k, Div aside.
func (v *Value) at(k uint64) uint64 {
	switch v.Kind {
	case Increment:
		return v.From + (k%v.n())*v.Step
	case Decrement:
		return v.To - (k%v.n())*v.Step
	case List, Weighted:
		return v.List[k%uint64(len(v.List))]
	case Random:
		r := mix(v.Seed, k)
		if len(v.List) > 0 {
			hi, _ := bits.Mul64(r, uint64(len(v.List)))
			return v.List[hi]
		}
		span := v.To - v.From + 1
		if span == 0 { // the whole 64-bit range
			return r
		}
		hi, _ := bits.Mul64(r, span)
		return v.From + hi
	}
	return v.From
}

// n is the number of distinct steps of an Increment/Decrement.
func (v *Value) n() uint64 { return (v.To-v.From)/v.Step + 1 }

// Period returns after how many packets the value repeats: 1 for Fixed,
// 0 for Random (never, as far as planning is concerned).
func (v *Value) Period() uint64 {
	if v.Div > 1 {
		return v.steps() * v.Div
	}
	return v.steps()
}

// steps is the period of the value's own sequence, Div aside.
func (v *Value) steps() uint64 {
	switch v.Kind {
	case Increment, Decrement:
		return v.n()
	case List, Weighted:
		return uint64(len(v.List))
	case Random:
		return 0
	}
	return 1
}

// Min and Max bound the values the field takes.
func (v *Value) Min() uint64 {
	if len(v.List) > 0 {
		return slices.Min(v.List)
	}
	return v.From
}

// Max is the largest value the field takes.
func (v *Value) Max() uint64 {
	if len(v.List) > 0 {
		return slices.Max(v.List)
	}
	return v.To
}

// mix is SplitMix64 of seed and index: a stateless random value per packet,
// so that any worker computes the same value for the same packet.
func mix(seed, k uint64) uint64 {
	z := seed + (k+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// interleave spreads sizes in proportion to weights over one period of
// sum(weights) packets with smooth weighted round-robin (no bursts of one size).
func interleave(sizes, weights []uint64) []uint64 {
	var total uint64
	for _, w := range weights {
		total += w
	}
	cur := make([]int64, len(sizes))
	out := make([]uint64, 0, total)
	for range total {
		best := 0
		for i, w := range weights {
			cur[i] += int64(w)
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= int64(total)
		out = append(out, sizes[best])
	}
	return out
}
