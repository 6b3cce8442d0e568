package backend_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/inputerr"
	"github.com/wpg-dev/wpg/internal/testbed"
	"github.com/wpg-dev/wpg/sysinfo"
)

func TestLookupLinkLoopback(t *testing.T) {
	l, err := backend.LookupLink("afpacket", "lo")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Loopback() || !l.Virtual || l.Index < 1 || l.MTU < 1 || l.NUMANode != -1 {
		t.Errorf("lo: %+v", l)
	}
}

// A thread that entered a namespace with setns still sees the /sys of the
// namespace it was mounted in: the veth inside is not there, and was
// taken for a device with hardware behind it (afpacket then attached ring
// pages as fragments, which the veth copies again).
func TestLookupLinkInEnteredNamespace(t *testing.T) {
	v := testbed.NewVeth(t)
	var in, out backend.Link
	err := v.Do(func() (err error) {
		in, err = backend.LookupLink("afpacket", v.Inner)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err = backend.LookupLink("afpacket", v.Outer); err != nil {
		t.Fatal(err)
	}
	for _, l := range []backend.Link{in, out} {
		if !l.Virtual || l.Driver != "veth" || l.Loopback() || l.NUMANode != -1 || l.Bus != "" {
			t.Errorf("%s: %+v, want a virtual veth", l.Name, l)
		}
	}
	if in.SysShown || !out.SysShown {
		t.Errorf("SysShown: inside %v, outside %v; want false, true", in.SysShown, out.SysShown)
	}
	// The outer end's name does not exist inside.
	err = v.Do(func() error { _, err := backend.LookupLink("afpacket", v.Outer); return err })
	var ie *backend.InterfaceError
	if !errors.As(err, &ie) || !errors.Is(err, sysinfo.ErrNoInterface) || !strings.Contains(err.Error(), v.Inner) {
		t.Errorf("outer end looked up inside: %v", err)
	}
}

// Interface errors begin with the backend's name and say how to fix them;
// a caller that names the backend itself can tell (NamesBackend).
func TestInterfaceError(t *testing.T) {
	for _, c := range []struct {
		err  *backend.InterfaceError
		want string
		none bool // wraps sysinfo.ErrNoInterface
	}{
		{&backend.InterfaceError{Backend: "afxdp", Existing: []string{"lo", "veth0"}}, "afxdp: no interface: give one with -i IFACE (existing: lo, veth0)", false},
		{&backend.InterfaceError{Backend: "afpacket", Interface: "nosuch0", Existing: []string{"lo"}}, `afpacket: interface "nosuch0": no such network interface; existing interfaces: lo (-i IFACE)`, true},
		{&backend.InterfaceError{Backend: "afpacket", Interface: "veth0", Down: true}, "afpacket: interface veth0 is down: bring it up with `ip link set veth0 up`", false},
	} {
		if c.err.Error() != c.want {
			t.Errorf("Error() = %q, want %q", c.err.Error(), c.want)
		}
		if errors.Is(c.err, sysinfo.ErrNoInterface) != c.none {
			t.Errorf("%q: errors.Is(ErrNoInterface) = %v", c.want, !c.none)
		}
		if !backend.NamesBackend(c.err, c.err.Backend) || backend.NamesBackend(c.err, "pcap") {
			t.Errorf("%q: NamesBackend wrong", c.want)
		}
	}
	ie := &backend.InterfaceError{Backend: "afxdp", Interface: "x"}
	if !backend.NamesBackend(inputerr.WithFix(ie, "fix"), "afxdp") {
		t.Error("an InterfaceError marked WithFix: NamesBackend false")
	}
	if backend.NamesBackend(fmt.Errorf("worker 0: %w", ie), "afxdp") {
		t.Error("a wrapped InterfaceError whose text begins otherwise: NamesBackend true")
	}
	if !backend.NamesBackend(&backend.UnsupportedError{Backend: "afxdp", What: "x"}, "afxdp") || backend.NamesBackend(nil, "afxdp") {
		t.Error("NamesBackend of an UnsupportedError / nil")
	}
}
