package afpacket_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/backend/afpacket"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/sysinfo"
)

// A sender opened on a thread that entered the namespace with setns (as
// wpg ndr's and the tests' receivers are) knows the veth there for a
// virtual device, as one opened in the namespace from the start does:
// /sys, mounted for the first namespace, has no such interface, and the
// lookup took it for hardware (ring pages attached as fragments, which
// the veth then copies again).
func TestSenderInEnteredNamespace(t *testing.T) {
	v := testbed.NewVeth(t)
	var note string
	err := v.Do(func() error {
		s, err := afpacket.NewSender(context.Background(), backend.Options{MaxFrame: 64, Net: backend.NetOptions{Interface: v.Inner}})
		if err != nil {
			return err
		}
		note = s.Info().Details["tx_copy"]
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(note, "linear (virtual device") {
		t.Errorf("tx_copy on %s inside the namespace: %q, want linear for a virtual device", v.Inner, note)
	}
}

// A missing interface is the job's error, once, from Open: not each
// worker's ("workers 0, 1: afpacket: …"), and worded as afxdp's.
func TestOpenRefusesMissingInterface(t *testing.T) {
	reg, err := backend.Lookup("afpacket")
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg.Open(context.Background(), backend.Options{MaxFrame: 64, Workers: 2, Net: backend.NetOptions{Interface: "wpg-nonesuch0"}})
	var ie *backend.InterfaceError
	if !errors.As(err, &ie) || !errors.Is(err, sysinfo.ErrNoInterface) || !backend.NamesBackend(err, "afpacket") ||
		!strings.HasPrefix(err.Error(), `afpacket: interface "wpg-nonesuch0": no such network interface; existing interfaces: `) {
		t.Errorf("Open: %v", err)
	}
}
