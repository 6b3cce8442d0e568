package template

// swrr is the smooth weighted round-robin of a Source's active streams:
// every pick adds each stream's share to its current weight, takes the
// stream with the largest weight (the lowest index among equals) and
// subtracts the total of the shares from it.
//
// Done stream by stream that costs O(streams) a pick, and one precomputed
// period of sum(shares) picks O(streams × sum(shares)): 4.3 G steps for
// 65,535 streams of share 1. Streams of equal share move in lockstep,
// though: within such a group the weights differ only by whole totals,
// the pick is always the next member in index order, and the group is
// fully described by one weight and a position. A pick is O(groups), and
// the number of distinct shares g satisfies g(g+1)/2 <= sum(shares), so
// one period of at most maxSched picks costs at most maxSched × 362 steps,
// with the same picks, in the same order, as the stream-by-stream rule.
type swrr struct {
	total  int64
	groups []sgroup
}

// sgroup is the streams of one share: the members at pos and after have
// weight cur, those before pos (picked once more this round) cur - total.
type sgroup struct {
	share   int64
	cur     int64
	pos     int
	members []int // stream indexes, ascending
}

// newSWRR builds the round-robin over active (ascending stream indexes).
func newSWRR(active []int, share func(i int) int64) swrr {
	var s swrr
	at := map[int64]int{}
	for _, i := range active {
		sh := share(i)
		g, ok := at[sh]
		if !ok {
			g = len(s.groups)
			at[sh] = g
			s.groups = append(s.groups, sgroup{share: sh})
		}
		s.groups[g].members = append(s.groups[g].members, i)
		s.total += sh
	}
	return s
}

// next returns the stream of the next pick.
func (s *swrr) next() int {
	best, bestCur, bestIdx := -1, int64(0), 0
	for g := range s.groups {
		gr := &s.groups[g]
		gr.cur += gr.share
		if i := gr.members[gr.pos]; best < 0 || gr.cur > bestCur || (gr.cur == bestCur && i < bestIdx) {
			best, bestCur, bestIdx = g, gr.cur, i
		}
	}
	gr := &s.groups[best]
	if gr.pos++; gr.pos == len(gr.members) {
		gr.pos = 0
		gr.cur -= s.total
	}
	return bestIdx
}

// remove takes stream i (of share sh) out of the rotation and restarts
// the weights of the others from zero. It does not allocate.
func (s *swrr) remove(i int, sh int64) {
	for g := range s.groups {
		gr := &s.groups[g]
		if gr.share != sh {
			continue
		}
		for j, m := range gr.members {
			if m == i {
				gr.members = append(gr.members[:j], gr.members[j+1:]...)
				break
			}
		}
		if len(gr.members) == 0 {
			s.groups = append(s.groups[:g], s.groups[g+1:]...)
		}
		break
	}
	s.total -= sh
	for g := range s.groups {
		s.groups[g].cur, s.groups[g].pos = 0, 0
	}
}
