package netns

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	"github.com/mdlayher/packet"
	"github.com/wpg-dev/wpg/internal/vlanbpf"
	"golang.org/x/net/bpf"
)

// vlanRelay joins a trunk (the router's end of a link) to an access
// interface (the far end of a veth pair whose near end is the router's
// VLAN interface) as a kernel's VLAN interface would: a frame that comes
// in on the trunk with the tag stack tags is passed to the access side
// without them, and a frame that comes in on the access side goes out on
// the trunk with them.
type vlanRelay struct {
	trunk, access *packet.Conn
	tags          []vlanbpf.Tag
	wg            sync.WaitGroup
}

// pktOutgoing is PACKET_OUTGOING, a frame the host sends (the socket
// filter's packet type).
const pktOutgoing = 4

// newVLANRelay opens the relay's sockets in the calling thread's
// namespace and starts it.
func newVLANRelay(trunk, access string, tags []vlanbpf.Tag) (*vlanRelay, error) {
	x := &vlanRelay{tags: tags}
	for _, s := range []struct {
		name string
		c    **packet.Conn
		prog []bpf.Instruction
	}{{trunk, &x.trunk, trunkFilter(tags)}, {access, &x.access, incoming()}} {
		ifi, err := net.InterfaceByName(s.name)
		if err != nil {
			x.close()
			return nil, err
		}
		f, err := bpf.Assemble(s.prog)
		if err != nil {
			x.close()
			return nil, err
		}
		if *s.c, err = packet.Listen(ifi, packet.Raw, 0x0003, &packet.Config{Filter: f}); err != nil {
			x.close()
			return nil, fmt.Errorf("netns: VLAN relay on %s: %w", s.name, err)
		}
		// Room for a burst while the relay waits for a CPU (a run
		// shares it): at the socket's default, a few hundred frames.
		if err := bigBuffer(*s.c); err != nil {
			x.close()
			return nil, fmt.Errorf("netns: VLAN relay on %s: %w", s.name, err)
		}
	}
	x.wg.Add(2)
	go x.run(x.trunk, x.access, x.untag)
	go x.run(x.access, x.trunk, x.tag)
	return x, nil
}

// incoming passes the frames that come in, not the host's own.
func incoming() []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: pktOutgoing, SkipTrue: 1},
		bpf.RetConstant{Val: 0xffff},
		bpf.RetConstant{Val: 0},
	}
}

// trunkFilter passes the frames that come in with the tag stack tags,
// the outer tag in the frame or in its metadata (where the kernel puts
// it on receive): vlanbpf.Filter after a check that drops the host's own.
func trunkFilter(tags []vlanbpf.Tag) []bpf.Instruction {
	f := vlanbpf.Filter(tags, func(uint32) []bpf.Instruction { return []bpf.Instruction{bpf.RetConstant{Val: vlanbpf.Accept}} })
	return append([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: pktOutgoing, SkipTrue: uint8(len(f) - 1)}, // to f's last instruction, a reject
	}, f...)
}

// run relays the frames read from in to out, each as f makes it.
func (x *vlanRelay) run(in, out *packet.Conn, f func(b []byte) []byte) {
	defer x.wg.Done()
	buf := make([]byte, 1<<16)
	for {
		n, _, err := in.ReadFrom(buf[8:])
		if err != nil {
			return // closed
		}
		b := f(buf[:8+n])
		if b == nil {
			continue
		}
		_, _ = out.WriteTo(b, &packet.Addr{HardwareAddr: net.HardwareAddr(b[:6])})
	}
}

// untag takes the tags the frame b[8:] still holds off it.
func (x *vlanRelay) untag(b []byte) []byte {
	f := b[8:]
	n := 0
	for n < len(x.tags) && len(f) >= 12+4*(n+1)+2 {
		if et := binary.BigEndian.Uint16(f[12+4*n:]); et != 0x8100 && et != 0x88a8 {
			break
		}
		n++
	}
	if n == 0 {
		return f
	}
	copy(f[4*n:], f[:12])
	return f[4*n:]
}

// tag puts the tags on the frame b[8:], in the 8 bytes before it.
func (x *vlanRelay) tag(b []byte) []byte {
	if len(b) < 8+14 {
		return nil
	}
	n := 4 * len(x.tags)
	f := b[8-n:]
	copy(f, b[8:8+12])
	for i, t := range x.tags {
		binary.BigEndian.PutUint16(f[12+4*i:], t.TPID)
		binary.BigEndian.PutUint16(f[14+4*i:], t.ID)
	}
	return f
}

// close stops the relay.
func (x *vlanRelay) close() {
	for _, c := range []*packet.Conn{x.trunk, x.access} {
		if c != nil {
			c.Close()
		}
	}
	x.wg.Wait()
}
