package template

import (
	"errors"
	"fmt"

	"github.com/wpg-dev/wpg/nexthop"
)

// portPair parses what a template says for port pairs: ports: (the
// ports' addresses and gateways) and reverse: (the streams of the reverse
// direction).
func (p *parser0) portPair(raw *rawFile, s *Spec) error {
	if len(raw.Reverse) > maxStreams {
		return p.errAt(nil, "reverse", fmt.Sprintf("%d reverse streams; the signature's stream id is 16 bits", len(raw.Reverse)), fmt.Sprintf("use at most %d streams", maxStreams))
	}
	for i := range raw.Reverse {
		st, err := p.stream(&raw.Reverse[i], fmt.Sprintf("reverse[%d]", i))
		if err != nil {
			return err
		}
		if st.Name == "" {
			st.Name = fmt.Sprintf("reverse%d", i)
		}
		s.Reverse = append(s.Reverse, *st)
	}
	if raw.Ports == nil {
		return nil
	}
	s.Ports = &Ports{}
	for _, x := range []struct {
		key string
		raw *rawPort
		dst **nexthop.Port
	}{{"tx", raw.Ports.TX, &s.Ports.TX}, {"rx", raw.Ports.RX, &s.Ports.RX}} {
		if x.raw == nil {
			continue
		}
		path := "ports." + x.key
		if !x.raw.SrcIP.set() {
			return p.keyErr(path, "a port needs its address", "add src_ip: with the port's address and the link's prefix, e.g. src_ip: 198.18.0.1/24")
		}
		addr, err := p.text(x.raw.SrcIP, path+".src_ip", "an address with a prefix length")
		if err != nil {
			return err
		}
		gw := ""
		if x.raw.Gateway.set() {
			if gw, err = p.text(x.raw.Gateway, path+".gateway", "an IP address"); err != nil {
				return err
			}
		}
		port, err := nexthop.ParsePort(addr, gw)
		if err != nil {
			var pe *nexthop.PortError
			if errors.As(err, &pe) {
				key, n := "src_ip", x.raw.SrcIP.n
				if pe.Field == nexthop.FieldGateway {
					key, n = "gateway", x.raw.Gateway.n
				}
				return p.errAt(n, path+"."+key, fmt.Sprintf("%q %s", pe.Value, pe.Why), pe.Remedy)
			}
			return p.errAt(x.raw.SrcIP.n, path, err.Error(), "")
		}
		*x.dst = &port
	}
	return nil
}
