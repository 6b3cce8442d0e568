//go:build dpdk && linux && cgo

package dpdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/dpdk/internal/rte"
	"github.com/wpg-dev/wpg/internal/testbed"
)

// testEAL are the EAL arguments of this test process: two null ports, no
// hugepages, no shared files.
var testEAL = []string{"--no-huge", "-m", "256", "--no-shconf", "--no-telemetry", "--no-pci", "--file-prefix", testPrefix, "--vdev", "net_null0", "--vdev", "net_null1"}

// testPrefix names the EAL's runtime directory (/var/run/dpdk/PREFIX,
// made empty even with --no-shconf), removed by TestMain.
var testPrefix = fmt.Sprintf("wpg-unit-%d", os.Getpid())

func TestMain(m *testing.M) {
	code := m.Run()
	os.RemoveAll("/var/run/dpdk/" + testPrefix)
	os.Remove("/var/run/dpdk") // only when empty
	os.Exit(code)
}

func openNull(t *testing.T, port string, workers, queue int) backend.Instance {
	t.Helper()
	testbed.RequireRoot(t)
	in, err := open(context.Background(), backend.Options{
		Workers: workers, MaxFrame: 128, Batch: 32,
		Net:  backend.NetOptions{Interface: port, Queue: queue},
		DPDK: backend.DPDKOptions{EALArgs: testEAL},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

// onThread runs f on a locked OS thread, as the engine runs a worker.
func onThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		f()
	}()
	<-done
}

// TestWorkersOnTheirQueues: worker i sends on TX queue Queue+i, each
// burst rendered into mbufs goes out whole, and the port counts every
// frame the senders committed.
func TestWorkersOnTheirQueues(t *testing.T) {
	in := openNull(t, "net_null1", 2, 3)
	const bursts = 50
	total := 0
	for w := range 2 {
		onThread(func() {
			s, err := in.NewSender(backend.Worker{Index: w, MaxFrame: 128})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			if q := s.Info().Details["queue"]; q != []string{"3", "4"}[w] {
				t.Errorf("worker %d on queue %s", w, q)
			}
			bufs := make([][]byte, 32)
			lens := make([]int, 32)
			for range bursts {
				n, err := s.Reserve(bufs)
				if err != nil || n != 32 {
					t.Fatalf("reserve: %d, %v", n, err)
				}
				for i := range n {
					if len(bufs[i]) != 128 {
						t.Fatalf("buffer of %d bytes", len(bufs[i]))
					}
					bufs[i][0] = byte(i)
					lens[i] = 64 + i
				}
				// Commit fewer than reserved: the rest stay for the next Reserve.
				sent, err := s.Commit(lens[:n-2])
				if err != nil || sent != n-2 {
					t.Fatalf("commit: %d, %v", sent, err)
				}
				total += sent
			}
			d := s.Info().Details
			if d["tx_bursts"] != "50" || d["mbuf_alloc_failures"] != "0" || d["driver"] != "net_null" || d["queues"] != "3-4 (5 configured)" || d["mbuf_room"] != "128" {
				t.Errorf("details %v", d)
			}
		})
	}
	port := in.(*instance).port.ID
	st, err := rte.StatsOf(port)
	if err != nil {
		t.Fatal(err)
	}
	if st.OPackets != uint64(total) {
		t.Errorf("port counted %d frames out, the senders committed %d", st.OPackets, total)
	}
}

// TestReservedMbufsKeepTheirFrames: the sender keeps its buffers
// (KeepsBuffers): bursts after bursts through net_null, every mbuf
// reserved again holds, byte for byte, the frame last written into it,
// whatever bursts went out in between and however many of a burst were
// committed.
func TestReservedMbufsKeepTheirFrames(t *testing.T) {
	in := openNull(t, "net_null0", 1, 0)
	onThread(func() {
		s, err := in.NewSender(backend.Worker{Index: 0, MaxFrame: 128})
		if err != nil {
			t.Error(err)
			return
		}
		defer s.Close()
		if !s.(*Sender).KeepsBuffers() {
			t.Fatal("the sender does not keep its buffers")
		}
		last := map[*byte][]byte{} // an mbuf's data room: the frame written into it
		bufs := make([][]byte, 32)
		lens := make([]int, 32)
		again := 0
		for burst := range 400 {
			n, err := s.Reserve(bufs)
			if err != nil || n == 0 {
				t.Fatalf("reserve: %d, %v", n, err)
			}
			for i, b := range bufs[:n] {
				if want, ok := last[&b[0]]; ok {
					again++
					if !bytes.Equal(b[:len(want)], want) {
						t.Fatalf("burst %d: mbuf %p holds\n% x\nwas written\n% x", burst, &b[0], b[:len(want)], want)
					}
				}
				lens[i] = 60 + (burst+i)%68
				for j := range b[:lens[i]] {
					b[j] = byte(burst*7 + i*3 + j)
				}
				last[&b[0]] = bytes.Clone(b[:lens[i]])
			}
			// Some bursts commit fewer than reserved: those stay for
			// the next Reserve, as rendered.
			m := n - burst%3
			if sent, err := s.Commit(lens[:m]); err != nil || sent != m {
				t.Fatalf("commit: %d, %v", sent, err)
			}
		}
		if again < 1000 {
			t.Fatalf("only %d mbufs came back", again)
		}
	})
}

// TestMbufRoom: a worker's mbufs hold its largest frame rounded up to a
// cache line behind the headroom; a frame beyond what an mbuf's 16-bit
// length holds is refused with the limit.
func TestMbufRoom(t *testing.T) {
	for _, c := range []struct{ frame, room int }{{64, 64 + rte.Headroom}, {65, 128 + rte.Headroom}, {1518, 1536 + rte.Headroom}, {9000, 9024 + rte.Headroom}} {
		if room, err := mbufRoom(c.frame); err != nil || room != c.room {
			t.Errorf("mbufRoom(%d) = %d, %v; want %d", c.frame, room, err, c.room)
		}
	}
	if _, err := mbufRoom(65500); err == nil || !strings.Contains(err.Error(), "do not fit an mbuf") {
		t.Errorf("mbufRoom(65500): %v", err)
	}
}

// TestEALOncePerProcess: a later instance with other EAL arguments is
// refused with both sets named; one with the same arguments reuses the EAL.
func TestEALOncePerProcess(t *testing.T) {
	openNull(t, "net_null0", 1, 0)
	_, err := open(context.Background(), backend.Options{Workers: 1, Net: backend.NetOptions{Interface: "0"}, DPDK: backend.DPDKOptions{EALArgs: []string{"--no-huge", "--vdev", "net_null7"}}})
	if !errors.Is(err, rte.ErrAlreadyInitialised) || !strings.Contains(err.Error(), "net_null7") || !strings.Contains(err.Error(), "net_null1") {
		t.Fatalf("other EAL arguments: %v", err)
	}
}

// TestPortOneJobAtATime: a port held by one instance is refused to a
// second until the first closes.
func TestPortOneJobAtATime(t *testing.T) {
	first := openNull(t, "net_null0", 1, 0)
	_, err := open(context.Background(), backend.Options{Workers: 1, Net: backend.NetOptions{Interface: "net_null0"}, DPDK: backend.DPDKOptions{EALArgs: testEAL}})
	if err == nil || !strings.Contains(err.Error(), "in use by another job") {
		t.Fatalf("second instance on the port: %v", err)
	}
	first.Close()
	openNull(t, "net_null0", 1, 0)
}

// TestNoSuchPort lists the ports that exist.
func TestNoSuchPort(t *testing.T) {
	testbed.RequireRoot(t)
	_, err := open(context.Background(), backend.Options{Workers: 1, Net: backend.NetOptions{Interface: "net_nope"}, DPDK: backend.DPDKOptions{EALArgs: testEAL}})
	if err == nil || !strings.Contains(err.Error(), "port 0 (net_null0, net_null)") || !strings.Contains(err.Error(), "port 1 (net_null1, net_null)") {
		t.Fatalf("no such port: %v", err)
	}
}
