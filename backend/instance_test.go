package backend

import (
	"context"
	"errors"
	"testing"
	"time"
)

type fakeSender struct{ o Options }

func (f *fakeSender) Reserve([][]byte) (int, error) { return 0, nil }
func (f *fakeSender) Commit([]int) (int, error)     { return 0, nil }
func (f *fakeSender) MaxFrame() int                 { return f.o.MaxFrame }
func (f *fakeSender) Info() Info                    { return Info{} }
func (f *fakeSender) Flush() error                  { return nil }
func (f *fakeSender) Close() error                  { return nil }

type fakeReceiver struct{}

func (fakeReceiver) Next([][]byte, time.Duration) (int, error) { return 0, nil }
func (fakeReceiver) Info() Info                                { return Info{} }
func (fakeReceiver) Close() error                              { return nil }

// Factories opens each worker's sender with the job's options, the frame
// size raised to the worker's; a side it lacks is ErrUnsupported.
func TestFactoriesInstance(t *testing.T) {
	inst, err := Factories{Sender: func(_ context.Context, o Options) (Sender, error) { return &fakeSender{o}, nil }}.Open(context.Background(), Options{MaxFrame: 100, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	for _, c := range []struct{ worker, want int }{{50, 100}, {200, 200}} {
		s, err := inst.NewSender(Worker{Index: 1, MaxFrame: c.worker})
		if err != nil || s.MaxFrame() != c.want || s.(*fakeSender).o.Workers != 2 {
			t.Fatalf("worker MaxFrame %d: sender %v, %v; want MaxFrame %d of 2 workers", c.worker, s, err, c.want)
		}
	}
	if _, err := inst.NewReceiver(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewReceiver without a receiver factory: %v; want ErrUnsupported", err)
	}
	rinst, _ := Factories{Receiver: func(context.Context, Options) (Receiver, error) { return fakeReceiver{}, nil }}.Open(context.Background(), Options{})
	if _, err := rinst.NewSender(Worker{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewSender without a sender factory: %v; want ErrUnsupported", err)
	}
	if _, err := rinst.NewReceiver(); err != nil {
		t.Errorf("NewReceiver: %v", err)
	}
}

func TestPeerString(t *testing.T) {
	for p, want := range map[Peer]string{
		{}:                              "own receiver",
		{Mode: PeerConnect, Sock: "/s"}: "--connect /s",
		{Mode: PeerStream}:              "standard output",
	} {
		if got := p.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", p, got, want)
		}
	}
}
