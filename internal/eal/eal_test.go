package eal

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jail is a confine function for the tests: paths are taken from /jail,
// and those outside it refused.
func jail(seen *[]Path) func(Path) (string, *Error) {
	return func(p Path) (string, *Error) {
		*seen = append(*seen, p)
		abs := p.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join("/jail", abs)
		}
		if !strings.HasPrefix(filepath.Clean(abs)+"/", "/jail/") || strings.Contains(p.Path, "..") {
			return "", &Error{Reason: "is outside /jail", Fix: "give a path in /jail"}
		}
		return filepath.Clean(abs), nil
	}
}

// TestConfineFinds: every EAL argument that names a file goes through the
// caller's confine and comes back as it made it; the rest is as given.
func TestConfineFinds(t *testing.T) {
	for _, c := range []struct {
		in, want string
		paths    []Path
	}{
		{"--no-huge -m 512 --in-memory --vdev net_null0", "--no-huge -m 512 --in-memory --vdev net_null0", nil},
		{"-l 0-1 -l0 --lcores=0@1 --log-level=lib.eal:debug --huge-unlink=never --file-prefix wpg-1.a",
			"-l 0-1 -l0 --lcores=0@1 --log-level=lib.eal:debug --huge-unlink=never --file-prefix wpg-1.a", nil},
		{"--vdev net_pcap0,tx_pcap=out.pcap,rx_pcap=/jail/in.pcap,iface=eth0", "--vdev net_pcap0,tx_pcap=/jail/out.pcap,rx_pcap=/jail/in.pcap,iface=eth0",
			[]Path{{"--vdev", "net_pcap0", "tx_pcap", "out.pcap"}, {"--vdev", "net_pcap0", "rx_pcap", "/jail/in.pcap"}}},
		{"--vdev=net_pcap0,tx_pcap=o.pcap", "--vdev=net_pcap0,tx_pcap=/jail/o.pcap", []Path{{"--vdev", "net_pcap0", "tx_pcap", "o.pcap"}}},
		{"--vdev net_vhost0,iface=vh.sock,queues=1", "--vdev net_vhost0,iface=/jail/vh.sock,queues=1", []Path{{"--vdev", "net_vhost0", "iface", "vh.sock"}}},
		{"-a 0000:01:00.0,foo=/jail/x", "-a 0000:01:00.0,foo=/jail/x", []Path{{"-a", "0000:01:00.0", "foo", "/jail/x"}}},
		{"--trace-dir t --huge-dir=/jail/huge", "--trace-dir /jail/t --huge-dir=/jail/huge", []Path{{Option: "--trace-dir", Path: "t"}, {Option: "--huge-dir", Path: "/jail/huge"}}},
	} {
		var seen []Path
		got, err := Confine(strings.Fields(c.in), jail(&seen))
		if err != nil || strings.Join(got, " ") != c.want || !slices.Equal(seen, c.paths) {
			t.Errorf("%s:\n got %q %v, paths %+v\nwant %q, paths %+v", c.in, strings.Join(got, " "), err, seen, c.want, c.paths)
		}
	}
}

// TestConfineRefuses: a file outside, -d, a prefix with a path in it, an
// option it does not know (an abbreviation, short options run together)
// and a bare word are refused, each naming the argument and a fix.
func TestConfineRefuses(t *testing.T) {
	for _, c := range []struct{ in, arg, reason string }{
		{"--no-huge --vdev net_pcap0,tx_pcap=/etc/passwd", "--vdev net_pcap0,tx_pcap=/etc/passwd", "outside /jail"},
		{"--vdev=net_pcap0,rx_pcap=../x.pcap", "--vdev=net_pcap0,rx_pcap=../x.pcap", "outside /jail"},
		{"--vdev net_af_xdp0,iface=veth0,xdp_prog=/tmp/p.o", "--vdev net_af_xdp0,iface=veth0,xdp_prog=/tmp/p.o", "outside /jail"},
		{"--vdev net_memif0,role=server,socket=/run/memif.sock", "--vdev net_memif0,role=server,socket=/run/memif.sock", "outside /jail"},
		{"--trace-dir /root", "--trace-dir /root", "outside /jail"},
		{"--huge-dir=/etc", "--huge-dir=/etc", "outside /jail"},
		{"-d /jail/librte_evil.so", "-d", "shared object"},
		{"-d/tmp/x.so", "-d/tmp/x.so", "shared object"},
		{"--file-prefix ../../etc/x", "--file-prefix ../../etc/x", "no plain name"},
		{"--file-prefix=/tmp/x", "--file-prefix=/tmp/x", "no plain name"},
		{"--trace-d=/tmp", "--trace-d=/tmp", "not an EAL option"},
		{"-vd/tmp/x.so", "-vd/tmp/x.so", "not an EAL option"},
		{"--create-uio-dev", "--create-uio-dev", "not an EAL option"},
		{"--help", "--help", "not an EAL option"},
		{"net_null0", "net_null0", "no EAL option"},
	} {
		var seen []Path
		_, err := Confine(strings.Fields(c.in), jail(&seen))
		var e *Error
		if !errors.As(err, &e) || e.Arg != c.arg || !strings.Contains(e.Reason, c.reason) || e.Fix == "" {
			t.Errorf("%s: %v (%+v); want %q refused: %s", c.in, err, e, c.arg, c.reason)
		}
	}
}
