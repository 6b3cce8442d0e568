package peer

// WriteGroup returns how many of the frames lens (laid out stride bytes
// apart) go into one write, and their bytes: small frames back to back up
// to limit bytes, a frame shorter than stride ending the group (the next
// one does not follow it directly), a large frame alone.
func WriteGroup(lens []int, stride, limit int) (k, total int) {
	for k < len(lens) && (k == 0 || total+lens[k] <= limit) && (k == 0 || lens[k-1] == stride) {
		total += lens[k]
		k++
	}
	return k, total
}

// WholeFrames is the number of frames of lens that lie completely within
// the first written bytes (a frame cut by a broken pipe or connection is
// not counted).
func WholeFrames(lens []int, written int) int {
	for i, l := range lens {
		if written < l {
			return i
		}
		written -= l
	}
	return len(lens)
}
