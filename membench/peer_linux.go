//go:build linux

package membench

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/sys"
)

// ServePeer runs the exporting side of the benchmark in a process started
// by Run (the wpg binary does this for the hidden `wpg membench --peer`).
// It expects the control socket as fd 3 and the pipe's write end as fd 4,
// serves requests until the importer says goodbye or goes away, and
// releases every buffer before it returns.
func ServePeer() error {
	ctl := os.NewFile(peerCtlFD, "membench-ctl")
	pipeW := os.NewFile(peerPipeFD, "membench-pipe-w")
	if ctl == nil {
		return errors.New("membench peer: fd 3 (control socket) is not open: this mode is started by `wpg membench`, not by hand")
	}
	defer ctl.Close()
	if pipeW != nil {
		defer pipeW.Close()
	}
	p := &peer{ctl: ctl, pipeW: pipeW}
	defer p.free()
	defer func() {
		if p.xp != nil {
			_ = p.xp.Close()
		}
	}()
	runtime.LockOSThread()
	buf := make([]byte, maxMsg)
	for {
		n, _, err := sys.RecvMsgFile(ctl, buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return nil // the importer went away
			}
			return fmt.Errorf("membench peer: %w", err)
		}
		req, err := decodeRequest(buf[:n])
		if err != nil {
			return fmt.Errorf("membench peer: %w", err)
		}
		if req.Op == "bye" {
			return p.send(reply{OK: true}, nil)
		}
		rep, f := p.handle(req)
		if err := p.send(rep, f); err != nil {
			return err
		}
	}
}

type peer struct {
	ctl, pipeW *os.File
	region     *sys.Mapping
	memfd      *os.File
	xp         *sys.XPMEM
	segid      sys.XPMEMSegid
	size       int
}

func (p *peer) send(r reply, f *os.File) error {
	b, err := encodeReply(r)
	if err != nil {
		return err
	}
	return sys.SendMsgFile(p.ctl, b, f)
}

func fail(err error) (reply, *os.File) { return reply{Err: err.Error()}, nil }

func (p *peer) handle(req request) (reply, *os.File) {
	switch req.Op {
	case "hello":
		if req.CPU >= 0 {
			if err := sys.PinThread(req.CPU); err != nil {
				return fail(err)
			}
		}
		return reply{OK: true, Pid: os.Getpid()}, nil
	case "alloc":
		p.free()
		return p.alloc(req)
	case "pipe":
		if p.region == nil || p.pipeW == nil {
			return fail(errors.New("pipe request without a buffer or pipe"))
		}
		b := p.region.Bytes()[:p.size]
		for i := int64(0); i < req.Ops; i++ {
			if err := sys.WriteFull(p.pipeW, b); err != nil {
				return fail(err)
			}
		}
		return reply{OK: true}, nil
	case "free":
		p.free()
		return reply{OK: true}, nil
	}
	return fail(fmt.Errorf("unknown request %q", req.Op))
}

func (p *peer) alloc(req request) (reply, *os.File) {
	size := int(req.Size)
	mapLen := roundPage(size)
	p.size = size
	var err error
	switch req.Method {
	case SHMCopy, SHMDirect:
		if p.memfd, err = sys.MemfdFile("wpg-membench", mapLen); err != nil {
			return fail(err)
		}
		if p.region, err = sys.MapFile(int(p.memfd.Fd()), mapLen, true, false, p.memfd.Name()); err != nil {
			return fail(err)
		}
	case XPMEMCopy, XPMEMDirect:
		if p.xp == nil {
			if p.xp, err = sys.OpenXPMEM(); err != nil {
				return reply{Err: err.Error(), NotAvailable: errors.Is(err, sys.ErrXPMEMNotLoaded)}, nil
			}
		}
		fallthrough
	default:
		if p.region, err = sys.MapAnonLazy(mapLen, req.THP); err != nil {
			return fail(err)
		}
	}
	b := p.region.Bytes()[:size]
	fill(b, req.Seed)
	r := reply{OK: true, Sum: memread.Sum64Generic(b), Addr: uint64(p.region.Addr())}
	switch req.Method {
	case SHMCopy, SHMDirect:
		return r, p.memfd
	case XPMEMCopy, XPMEMDirect:
		seg, err := p.xp.Make(p.region.Addr(), uint64(mapLen), 0o600)
		if err != nil {
			return fail(err)
		}
		p.segid = seg
		r.Segid = int64(seg)
	}
	return r, nil
}

func (p *peer) free() {
	if p.segid != 0 && p.xp != nil {
		_ = p.xp.Remove(p.segid)
		p.segid = 0
	}
	if p.region != nil {
		_ = p.region.Close()
		p.region = nil
	}
	if p.memfd != nil {
		_ = p.memfd.Close()
		p.memfd = nil
	}
}

func roundPage(n int) int {
	pg := os.Getpagesize()
	return (n + pg - 1) / pg * pg
}
