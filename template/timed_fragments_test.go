package template

import "testing"

// The fragments of a datagram of a stream with its own rate go together,
// at the datagram's due time: the fragments after the first went one
// interval late, with the next datagram's first (at 1 kpps, 3 fragments
// per datagram: due 0, 1, 1, 1, 2, 2, … ms instead of 0, 0, 0, 1, 1, 1),
// and the run ended an interval after the last datagram was due.
func TestTimedFragmentsShareTheirDatagramsDue(t *testing.T) {
	spec, err := Parse("frag.wpg.yaml", []byte("streams:\n  - {size: 3200, count: 4, rate: 1kpps, ipv4: {fragment: {mtu: 1500}}, udp: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := Compile(spec, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bufs := make([][]byte, 8)
	lens := make([]int, 8)
	dues := make([]int64, 8)
	for i := range bufs {
		bufs[i] = make([]byte, src.MaxFrame())
	}
	src.RecordDues(dues)
	src.Start(0)
	var got []int64
	for len(got) < 100 {
		due, ok := src.NextDue()
		if !ok {
			break
		}
		n := src.Render(bufs[:src.DueBy(due, len(bufs))], lens, due)
		got = append(got, dues[:n]...)
	}
	want := []int64{0, 0, 0, 1e6, 1e6, 1e6, 2e6, 2e6, 2e6, 3e6, 3e6, 3e6}
	if len(got) != len(want) {
		t.Fatalf("dues %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("dues %v, want %v", got, want)
		}
	}
	if end := src.Schedule().End(); end != 3e6 {
		t.Errorf("schedule ends at %v ns, want 3e6", end)
	}
	if due := src.Schedule().DueBy(1e6); due != 6 {
		t.Errorf("%v frames due by 1 ms, want 6 (two datagrams of 3 fragments)", due)
	}
}
