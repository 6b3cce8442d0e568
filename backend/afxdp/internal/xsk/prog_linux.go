//go:build linux

package xsk

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/wpg-dev/wpg/frame"
	"github.com/wpg-dev/wpg/header"
)

// Where the XDP program looks (package frame's signature: the last 20
// bytes of a frame, starting with the magic "WP").
const (
	sigLen   = frame.SignatureLen
	minFrame = header.EthernetLen + sigLen // an Ethernet header and a signature
	// magicLE is the signature's magic 0x5750 (big-endian on the wire)
	// as a little-endian 16-bit load of its two bytes sees it.
	magicLE = 0x5057
	// struct xdp_md: data, data_end, data_meta, ingress_ifindex,
	// rx_queue_index.
	xdpMdData     = 0
	xdpMdDataMeta = 8
	xdpMdRxQueue  = 16
	xdpPass       = 2
)

// The metadata the program puts in front of a steered frame: MetaMagic,
// then the kernel's CLOCK_MONOTONIC time (bpf_ktime_get_ns) when the frame
// reached XDP, both in host byte order.
const (
	MetaLen   = 16
	MetaMagic = 0x7465_6d64_7867_7077 // "wpgxdmet" in memory on little-endian hosts
)

// steerInstructions is the XDP program: frames of at least minFrame bytes
// whose last sigLen bytes start with wpg's magic go to the XSK of their
// receive queue (bpf_redirect_map on the XSKMAP, XDP_PASS when the queue
// has no socket); everything else passes to the stack. The signature sits
// at the end of the frame, at an offset the verifier cannot bound through
// packet pointers, so the program reads it with bpf_xdp_load_bytes at
// bpf_xdp_get_buff_len - 20 (Linux 5.18).
func steerInstructions(xsks *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1), // r6 = ctx
		asm.FnXdpGetBuffLen.Call(),  // r0 = frame length
		asm.JLT.Imm(asm.R0, minFrame, "pass"),
		asm.JGT.Imm(asm.R0, 0xffff, "pass"),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Sub.Imm(asm.R2, sigLen), // r2 = offset of the signature
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -8), // r3 = a stack slot
		asm.Mov.Imm(asm.R4, 2),
		asm.FnXdpLoadBytes.Call(),
		asm.JNE.Imm(asm.R0, 0, "pass"),
		asm.LoadMem(asm.R1, asm.RFP, -8, asm.Half),
		asm.JNE.Imm(asm.R1, magicLE, "pass"),
		// The receive time, in front of the frame as XDP metadata:
		// [MetaMagic][bpf_ktime_get_ns()], MetaLen bytes (skipped where
		// the driver has no room for metadata).
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, -MetaLen),
		asm.FnXdpAdjustMeta.Call(),
		asm.JNE.Imm(asm.R0, 0, "redirect"),
		asm.LoadMem(asm.R7, asm.R6, xdpMdDataMeta, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, xdpMdData, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R7),
		asm.Add.Imm(asm.R4, MetaLen),
		asm.JGT.Reg(asm.R4, asm.R3, "redirect"),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R7, 8, asm.R0, asm.DWord),
		asm.LoadImm(asm.R1, MetaMagic, asm.DWord),
		asm.StoreMem(asm.R7, 0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R2, asm.R6, xdpMdRxQueue, asm.Word).WithSymbol("redirect"), // key: the receive queue
		asm.LoadMapPtr(asm.R1, xsks.FD()),
		asm.Mov.Imm(asm.R3, xdpPass), // no socket on the queue: pass
		asm.FnRedirectMap.Call(),
		asm.Return(),
		asm.Mov.Imm(asm.R0, xdpPass).WithSymbol("pass"),
		asm.Return(),
	}
}

// AttachMode is how the program is attached to the interface.
type AttachMode int

// Attach modes.
const (
	AttachAuto    AttachMode = iota // driver mode, else generic (with the reason)
	AttachDriver                    // native, in the driver (XDP_FLAGS_DRV_MODE)
	AttachGeneric                   // generic, on the skb (XDP_FLAGS_SKB_MODE)
)

// Steering is the loaded XDP program, its XSKMAP and the BPF link that
// attaches it to one interface. The kernel detaches the program when the
// link's descriptor closes: on Close, and when the process dies, even by
// SIGKILL (the link is never pinned).
type Steering struct {
	xsks   *ebpf.Map
	prog   *ebpf.Program
	link   link.Link
	Driver bool   // attached in driver (native) mode
	Reason string // why generic mode, when auto fell back
}

// Steer loads the program with an XSKMAP of queues entries and attaches
// it to ifindex through a BPF link. On error nothing is left loaded.
func Steer(ifindex, queues int, mode AttachMode) (*Steering, error) {
	st, err := load(queues)
	if err != nil {
		return nil, err
	}
	prog := st.prog
	try := func(f link.XDPAttachFlags) error {
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: f})
		if err == nil {
			st.link = l
		}
		return err
	}
	switch mode {
	case AttachDriver:
		err = try(link.XDPDriverMode)
		st.Driver = err == nil
	case AttachGeneric:
		err = try(link.XDPGenericMode)
	default:
		if derr := try(link.XDPDriverMode); derr == nil {
			st.Driver = true
		} else if err = try(link.XDPGenericMode); err == nil {
			st.Reason = "driver mode refused (" + derr.Error() + "): attached in generic (SKB) mode"
		}
	}
	if err != nil {
		st.Close()
		return nil, &ErrStage{Stage: "attach", Op: fmt.Sprintf("attach XDP program to ifindex %d", ifindex), Err: err}
	}
	return st, nil
}

// plainErrno replaces a permission refusal from cilium/ebpf, whose text
// advises a Go API call (rlimit.RemoveMemlock) that means nothing to a
// user, by the system error itself; other errors (the verifier's log)
// stay as they are.
func plainErrno(err error) error {
	var en syscall.Errno
	if errors.As(err, &en) && (en == syscall.EPERM || en == syscall.EACCES) {
		return os.NewSyscallError("bpf", en)
	}
	return err
}

// load creates the XSKMAP of queues entries and loads the program, not
// yet attached.
func load(queues int) (*Steering, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "wpg_xsks", Type: ebpf.XSKMap, KeySize: 4, ValueSize: 4, MaxEntries: uint32(queues)})
	if err != nil {
		return nil, &ErrStage{Stage: "bpf", Op: "create XSKMAP", Err: plainErrno(err)}
	}
	st := &Steering{xsks: m}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "wpg_steer", Type: ebpf.XDP, License: "Dual MIT/GPL",
		Instructions: steerInstructions(m),
	})
	if err != nil {
		st.Close()
		return nil, &ErrStage{Stage: "bpf", Op: "load XDP program", Err: plainErrno(err)}
	}
	st.prog = prog
	return st, nil
}

// Add puts the socket fd into the map at queue.
func (st *Steering) Add(queue, fd int) error {
	if err := st.xsks.Put(uint32(queue), uint32(fd)); err != nil {
		return fmt.Errorf("XSKMAP[%d] = socket: %w", queue, err)
	}
	return nil
}

// Close detaches the program and frees it and its map; it is idempotent.
func (st *Steering) Close() error {
	var errs []error
	if st.link != nil {
		errs = append(errs, st.link.Close())
		st.link = nil
	}
	if st.prog != nil {
		errs = append(errs, st.prog.Close())
		st.prog = nil
	}
	if st.xsks != nil {
		errs = append(errs, st.xsks.Close())
		st.xsks = nil
	}
	return errors.Join(errs...)
}

// ProbeProgram reports whether the kernel loads the steering program (XDP
// programs, XSKMAPs and bpf_xdp_load_bytes, Linux 5.18): it loads it and
// frees it.
func ProbeProgram() error {
	st, err := load(1)
	if err != nil {
		return err
	}
	return st.Close()
}
