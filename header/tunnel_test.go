package header

import (
	"bytes"
	"testing"
)

func TestMPLS(t *testing.T) {
	m := make(MPLS, MPLSLen)
	m.Set(0xabcde, 5, true, 64)
	if !bytes.Equal(m, []byte{0xab, 0xcd, 0xeb, 0x40}) {
		t.Fatalf("% x", []byte(m))
	}
	if m.Label() != 0xabcde || m.TC() != 5 || !m.Bottom() || m.TTL() != 64 {
		t.Fatalf("label %#x tc %d bottom %v ttl %d", m.Label(), m.TC(), m.Bottom(), m.TTL())
	}
}

func TestGRE(t *testing.T) {
	g := make(GRE, 16)
	g.SetFlags(true, true, true)
	g.SetProtocol(EtherTypeTEB)
	copy(g[8:], []byte{0, 0, 0, 42})
	if g[0] != 0xb0 || g.Len() != 16 || g.Protocol() != 0x6558 || g.Key() != 42 {
		t.Fatalf("flags %#x len %d protocol %#x key %d", g[0], g.Len(), g.Protocol(), g.Key())
	}
	g.SetFlags(false, true, false)
	if g.Len() != 8 || g.Key() != 0 {
		t.Fatalf("key only: len %d key at 4: %d", g.Len(), g.Key())
	}
	if VNI([]byte{8, 0, 0, 0, 0x12, 0x34, 0x56, 0}) != 0x123456 {
		t.Fatal("VNI")
	}
}
