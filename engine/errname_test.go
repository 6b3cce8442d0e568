package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/inputerr"
)

// senderFailing opens, and fails every sender with err.
type senderFailing struct{ err error }

func (s senderFailing) NewSender(backend.Worker) (backend.Sender, error) { return nil, s.err }
func (s senderFailing) NewReceiver() (backend.Receiver, error)           { return nil, errors.ErrUnsupported }
func (s senderFailing) Close() error                                     { return nil }

// A backend's error names the backend once, at the start, whichever layer
// wrote the name: afxdp's refusal of its queues read "backend afxdp:
// queues 0-1 …" beside "afxdp: interface …", and dpdk's EAL errors
// "backend dpdk: dpdk: …"; a sender that failed on pcapfile read
// "worker 0: -o x.pcap: …" without the backend at all.
func TestBackendErrorsNameTheBackendOnce(t *testing.T) {
	plain := errors.New("queues 0-1: lo has 1 TX queue")
	named := backend.Errorf("net", "the EAL found no port")
	for _, c := range []struct {
		name   string
		open   error // from Open
		sender error // from NewSender, when Open succeeds
		want   string
	}{
		{"plain Open error", plain, nil, "net: queues 0-1: lo has 1 TX queue"},
		{"Open error naming the backend", named, nil, "net: the EAL found no port"},
		{"with a fix", inputerr.WithFix(named, "give a vdev"), nil, "net: the EAL found no port"},
		{"interface error", &backend.InterfaceError{Backend: "net", Interface: "x0", Down: true}, nil, "net: interface x0 is down"},
		{"unsupported", &backend.UnsupportedError{Backend: "net", What: "TX rings"}, nil, "net: TX rings is not supported"},
		{"plain sender error", nil, errors.New("-o x.pcap: cannot create"), "worker 0: net: -o x.pcap: cannot create"},
		{"sender error naming the backend", nil, named, "worker 0: net: the EAL found no port"},
		{"Errorf", backend.Errorf("net", "the receiver has gone"), nil, "net: the receiver has gone"},
		{"ErrorfAt the interface", nil, backend.ErrorfAt("net", "on veth0", "needs CAP_NET_RAW"), "worker 0: net on veth0: needs CAP_NET_RAW"},
		{"text beginning with a longer name", errors.New("network down"), nil, "net: network down"},
	} {
		reg := backend.Registration{Name: "net", Open: func(context.Context, backend.Options) (backend.Instance, error) {
			if c.open != nil {
				return nil, c.open
			}
			return senderFailing{c.sender}, nil
		}}
		job, err := engine.Start(context.Background(), engine.Config{
			Backend: reg, Workers: 1, Batch: 8, Count: 10,
			NewSource: func(context.Context, int, int) (engine.Source, error) { return &seqSource{step: 1}, nil },
		})
		if err == nil {
			err = job.Wait().Err()
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) || strings.Count(got, "net: ")+strings.Count(got, "net on ") != 1 || strings.Contains(got, "backend net") {
			t.Errorf("%s: %q, want it to begin %q and name the backend once", c.name, got, c.want)
		}
		if want := c.open; want != nil && !errors.Is(err, want) {
			t.Errorf("%s: %v does not unwrap to the backend's error", c.name, err)
		}
	}
}
