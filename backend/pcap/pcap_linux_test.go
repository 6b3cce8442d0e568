//go:build pcap && linux && cgo

package pcap

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// TestInjectOverVeth: every frame of every batch injected on one end of a
// veth pair arrives at the other, in order and byte for byte; a partial
// batch (Commit of fewer than reserved) sends just those.
func TestInjectOverVeth(t *testing.T) {
	v := testbed.NewVeth(t)
	var rx *afpacket.Receiver
	if err := v.Do(func() error {
		var err error
		rx, err = afpacket.NewReceiver(context.Background(), backend.Options{Net: backend.NetOptions{Interface: v.Inner, RingBytes: 1 << 20}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	s, err := NewSender(context.Background(), backend.Options{MaxFrame: 128, Batch: 16, Net: backend.NetOptions{Interface: v.Outer}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	frame := func(seq int) []byte {
		f := make([]byte, 60+seq%50)
		copy(f, []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5}) // local experimental EtherType
		binary.BigEndian.PutUint32(f[14:], uint32(seq))
		return f
	}
	bufs, lens := make([][]byte, 16), make([]int, 16)
	sent := 0
	for b := range 20 {
		n, err := s.Reserve(bufs)
		if err != nil || n != 16 {
			t.Fatalf("reserve: %d, %v", n, err)
		}
		if b%2 == 1 {
			n = 9 // a partial batch
		}
		for i := range n {
			lens[i] = copy(bufs[i], frame(sent+i))
		}
		k, err := s.Commit(lens[:n])
		if err != nil || k != n {
			t.Fatalf("commit: %d, %v", k, err)
		}
		sent += n
	}
	if s.Info().Details["libpcap"] == "" || s.Info().Mode != ModeInject {
		t.Errorf("info %+v", s.Info())
	}
	views := make([][]byte, 64)
	got := 0
	deadline := time.Now().Add(5 * time.Second)
	for got < sent && time.Now().Before(deadline) {
		n, err := rx.Next(views, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range views[:n] {
			if len(f) < 18 || binary.BigEndian.Uint16(f[12:]) != 0x88b5 {
				continue // not ours
			}
			if want := frame(got); string(f) != string(want) {
				t.Fatalf("frame %d: got % x, want % x", got, f, want)
			}
			got++
		}
	}
	if got != sent {
		t.Fatalf("received %d of %d frames", got, sent)
	}
}

// TestOpenErrors: bad input is refused before libpcap is called, with the
// fix.
func TestOpenErrors(t *testing.T) {
	for _, c := range []struct {
		o    backend.Options
		want string
	}{
		{backend.Options{MaxFrame: 64}, "give one with -i IFACE"},
		{backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: "wpg-nonesuch0"}}, "existing interfaces"},
		{backend.Options{MaxFrame: 70000, Net: backend.NetOptions{Interface: "lo"}}, "do not fit the MTU of lo"},
	} {
		_, err := NewSender(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o.Net, err, c.want)
		}
	}
}
