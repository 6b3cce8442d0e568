//go:build linux

package membench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/backend/pipe"
	"github.com/wpg-dev/wpg/internal/memread"
	"github.com/wpg-dev/wpg/internal/syncbuf"
	"github.com/wpg-dev/wpg/internal/sys"
)

// Run measures the matrix of cfg and returns the report. The importer
// side runs in the calling process on a locked OS thread; the exporter is
// a second process started with cfg.PeerArgs. A context cancel stops
// between operations and returns what was measured so far with ctx.Err().
// A checksum mismatch marks the cell and makes Run return an error
// wrapping ErrVerification together with the full report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	reader, err := memread.Lookup(cfg.Reader)
	if err != nil {
		return nil, err
	}
	copier, err := memread.LookupCopy(cfg.Copy)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	rep := &Report{
		Schema: Schema,
		System: systemInfo(),
		Sizes:  cfg.Sizes,
		Iters:  cfg.Iters,
		MinOps: max(cfg.MinBytes, 0),
		Pinned: cfg.Pin,
		THP:    cfg.HugePages,
		Reader: reader.How,
		Copy:   copier.How(),
	}
	for _, im := range memread.Available() {
		rep.Readers = append(rep.Readers, im.Name)
	}
	if err := checkMemory(cfg.Sizes); err != nil {
		return nil, err
	}

	imCPU, exCPU := -1, -1
	if cfg.Pin {
		cpus, err := sys.AllowedCPUs()
		if err != nil || len(cpus) == 0 {
			return nil, fmt.Errorf("pin: %v", err)
		}
		exCPU, imCPU = cpus[0], cpus[len(cpus)-1]
		if err := sys.PinThread(imCPU); err != nil {
			return nil, err
		}
	}

	var pr *peerProc
	needPeer := false
	for _, m := range cfg.Methods {
		needPeer = needPeer || m.needsPeer()
	}
	if needPeer {
		var err error
		pr, err = startPeer(cfg, exCPU)
		if err != nil {
			return nil, err
		}
		defer pr.stop()
		rep.PipeCap = pr.pipeCap
	}

	// Availability per method.
	xpErr := sys.XPMEMAvailable()
	for _, m := range cfg.Methods {
		mi := MethodInfo{Name: m, Available: true, Description: m.Describe()}
		if (m == XPMEMCopy || m == XPMEMDirect) && xpErr != nil {
			mi.Available = false
			mi.Reason = xpErr.Error() + ": load the xpmem kernel module (https://github.com/hpc/xpmem); CMA-cpy and SHM-dir are the stock-kernel analogues"
		}
		rep.Methods = append(rep.Methods, mi)
	}

	rep.Verified = true
	var xp *sys.XPMEM
	defer func() {
		if xp != nil {
			_ = xp.Close()
		}
	}()
	seed := uint64(time.Now().UnixNano())
	var runErr error
	for _, size := range cfg.Sizes {
		for i := range rep.Methods {
			mi := &rep.Methods[i]
			if !mi.Available {
				continue
			}
			if err := ctx.Err(); err != nil {
				rep.Interrupted = true
				return rep, err
			}
			seed++
			c := &cell{cfg: cfg, ctx: ctx, peer: pr, size: size, seed: seed, method: mi.Name, sum: reader.Sum, copier: copier}
			if mi.Name == XPMEMCopy || mi.Name == XPMEMDirect {
				if xp == nil {
					var err error
					if xp, err = sys.OpenXPMEM(); err != nil {
						mi.Available, mi.Reason = false, err.Error()
						continue
					}
				}
				c.xp = xp
			}
			res := c.run()
			if err := ctx.Err(); err != nil && res.Error != "" {
				// Stopped in the cell (Ctrl-C): not a failed
				// verification; the cells before it stand.
				rep.Interrupted = true
				return rep, err
			}
			if res.notAvailable != "" {
				mi.Available, mi.Reason = false, res.notAvailable
				continue
			}
			if !res.Verified {
				rep.Verified = false
			}
			rep.Results = append(rep.Results, res.Result)
			if cfg.Progress != nil {
				cfg.Progress(res.Result)
			}
			if res.fatal != nil {
				return rep, res.fatal
			}
		}
	}
	if !rep.Verified && runErr == nil {
		runErr = fmt.Errorf("%w: see the cells marked BAD DATA or error", ErrVerification)
	}
	if pr != nil {
		if err := pr.bye(); err != nil && runErr == nil {
			runErr = err
		}
	}
	return rep, runErr
}

// checkMemory refuses a size the machine cannot hold twice (source and
// destination) with room to spare.
func checkMemory(sizes []int64) error {
	avail := memAvailable()
	if avail <= 0 {
		return nil
	}
	for _, s := range sizes {
		if 2*s+s/4 > avail {
			return fmt.Errorf("size %s needs about %s of memory (source and destination), but only %s is available (MemAvailable): choose smaller --sizes",
				FormatSize(s), FormatSize(2*s), FormatSize(avail&^(1<<20-1)))
		}
	}
	return nil
}

// ---- the exporter process -------------------------------------------------

type peerProc struct {
	cmd     *exec.Cmd
	ctl     *os.File
	pipeR   *os.File
	pipeCap int
	pid     int
	stderr  *syncbuf.Buffer
	waitErr chan error
	buf     []byte
}

func startPeer(cfg Config, cpu int) (*peerProc, error) {
	args := cfg.PeerArgs
	if len(args) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("membench: find this executable to start the exporter process: %w", err)
		}
		args = []string{exe, "membench", "--peer"}
	}
	ctlMine, ctlPeer, err := sys.SeqpacketPair()
	if err != nil {
		return nil, err
	}
	// The pipe backend's sizing policy, so that both measure the same pipe.
	pipeR, pipeW, pcap, _, err := pipe.NewSized(pipeMaxSize())
	if err != nil {
		ctlMine.Close()
		ctlPeer.Close()
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = cfg.PeerEnv
	cmd.ExtraFiles = []*os.File{ctlPeer, pipeW} // fds 3 and 4
	cmd.SysProcAttr = sys.ChildAttr()
	eb := &syncbuf.Buffer{Max: 64 << 10}
	cmd.Stderr = eb
	err = cmd.Start()
	// The child has its copies now; ours must go so that its exit shows
	// as EOF on the control socket and the pipe.
	ctlPeer.Close()
	pipeW.Close()
	if err != nil {
		ctlMine.Close()
		pipeR.Close()
		return nil, fmt.Errorf("membench: start the exporter process %q: %w", strings.Join(args, " "), err)
	}
	p := &peerProc{cmd: cmd, ctl: ctlMine, pipeR: pipeR, pipeCap: pcap, pid: cmd.Process.Pid, stderr: eb, waitErr: make(chan error, 1), buf: make([]byte, maxMsg)}
	go func() { p.waitErr <- cmd.Wait() }()
	r, err := p.call(request{Op: "hello", CPU: cpu}, nil)
	if err != nil {
		p.stop()
		return nil, err
	}
	if r.Pid != 0 && r.Pid != p.pid {
		p.stop()
		return nil, fmt.Errorf("membench: exporter reports pid %d but pid %d was started (is PeerArgs a wrapper?): process_vm_readv needs the real pid", r.Pid, p.pid)
	}
	return p, nil
}

// call sends one request and waits for its reply.
func (p *peerProc) call(req request, fileOut **os.File) (reply, error) {
	b, err := encodeRequest(req)
	if err != nil {
		return reply{}, err
	}
	if err := sys.SendMsgFile(p.ctl, b, nil); err != nil {
		return reply{}, p.gone(err)
	}
	n, f, err := sys.RecvMsgFile(p.ctl, p.buf)
	if err != nil {
		return reply{}, p.gone(err)
	}
	if fileOut != nil {
		*fileOut = f
	} else if f != nil {
		_ = f.Close()
	}
	r, err := decodeReply(p.buf[:n])
	if err != nil {
		return reply{}, fmt.Errorf("membench: bad reply from the exporter: %w", err)
	}
	if !r.OK && r.Err == "" {
		r.Err = "request failed"
	}
	return r, nil
}

// gone explains a control-socket failure with the peer's fate.
func (p *peerProc) gone(err error) error {
	select {
	case werr := <-p.waitErr:
		p.waitErr <- werr
		msg := fmt.Sprintf("membench: the exporter process (pid %d) exited", p.pid)
		if werr != nil {
			msg += ": " + werr.Error()
		}
		if s := strings.TrimSpace(p.stderr.String()); s != "" {
			msg += ": " + s
		}
		return errors.New(msg)
	case <-time.After(200 * time.Millisecond):
	}
	return fmt.Errorf("membench: talk to the exporter process (pid %d): %w", p.pid, err)
}

func (p *peerProc) bye() error {
	_, err := p.call(request{Op: "bye"}, nil)
	return err
}

func (p *peerProc) stop() {
	_ = p.ctl.Close() // the peer sees EOF and exits
	select {
	case <-p.waitErr:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.waitErr
	}
	_ = p.pipeR.Close()
}

func pipeMaxSize() int {
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		return 1 << 20
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 1 << 20
	}
	return n
}

// ---- one cell ---------------------------------------------------------------

type cell struct {
	cfg    Config
	ctx    context.Context
	peer   *peerProc
	xp     *sys.XPMEM
	method Method
	size   int64
	seed   uint64
	sum    func([]byte) uint64 // the run's in-place reader
	copier memread.Copier      // the run's copy of the -cpy methods
}

type cellResult struct {
	Result
	notAvailable string
	fatal        error // the peer is gone: stop the whole run
}

// run sets the cell up, times the iterations and tears everything down.
func (c *cell) run() (out cellResult) {
	out.Method, out.Size = c.method, c.size
	size := int(c.size)
	mapLen := roundPage(size)
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	failf := func(err error) cellResult {
		out.Error = err.Error()
		out.Verified = false
		return out
	}

	// Source of the data: a local buffer or the exporter's.
	var want uint64
	var src []byte // in this process's address space (local, shm, xpmem)
	var remoteAddr uintptr
	if c.method == LocalCopy {
		r, err := sys.MapAnonLazy(mapLen, c.cfg.HugePages)
		if err != nil {
			return failf(err)
		}
		closers = append(closers, func() { _ = r.Close() })
		src = r.Bytes()[:size]
		fill(src, c.seed)
		want = memread.Sum64Generic(src)
	} else {
		var f *os.File
		rp, err := c.peer.call(request{Op: "alloc", Method: c.method, Size: c.size, Seed: c.seed, THP: c.cfg.HugePages}, &f)
		if err != nil {
			out.fatal = err
			return failf(err)
		}
		closers = append(closers, func() { _, _ = c.peer.call(request{Op: "free"}, nil) })
		if rp.NotAvailable {
			out.notAvailable = rp.Err
			return out
		}
		if !rp.OK {
			return failf(fmt.Errorf("exporter: %s", rp.Err))
		}
		want = rp.Sum
		remoteAddr = uintptr(rp.Addr)
		switch c.method {
		case SHMCopy, SHMDirect:
			if f == nil {
				return failf(errors.New("exporter sent no memfd"))
			}
			closers = append(closers, func() { _ = f.Close() })
			r, err := sys.MapFile(int(f.Fd()), mapLen, false, false, f.Name())
			if err != nil {
				return failf(err)
			}
			closers = append(closers, func() { _ = r.Close() })
			src = r.Bytes()[:size]
		case XPMEMCopy, XPMEMDirect:
			ap, err := c.xp.Get(sys.XPMEMSegid(rp.Segid), false)
			if err != nil {
				return failf(err)
			}
			closers = append(closers, func() { _ = c.xp.Release(ap) })
			at, err := c.xp.Attach(ap, 0, mapLen)
			if err != nil {
				return failf(err)
			}
			closers = append(closers, func() { _ = at.Detach() })
			src = at.Bytes()[:size]
		}
	}
	out.Checksum = fmt.Sprintf("%#016x", want)

	// Destination for the copying methods: fresh, untouched memory.
	var dst []byte
	if !c.method.inPlace() {
		r, err := sys.MapAnonLazy(mapLen, c.cfg.HugePages)
		if err != nil {
			return failf(err)
		}
		closers = append(closers, func() { _ = r.Close() })
		dst = r.Bytes()[:size]
	}

	var calls int64
	var totalOps int64
	out.Verified = true
	for it := 1; it <= c.cfg.Iters; it++ {
		if c.ctx.Err() != nil {
			return failf(c.ctx.Err())
		}
		ops := int64(1)
		if it > 1 && c.cfg.MinBytes > 0 {
			ops = min(max(1, (c.cfg.MinBytes+c.size-1)/c.size), MaxOpsPerIteration)
		}
		var bad int64
		var ns int64
		var err error
		switch c.method {
		case LocalCopy, SHMCopy, XPMEMCopy:
			t0 := nowNs()
			for k := int64(0); k < ops; k++ {
				c.copier.Copy(dst, src)
			}
			ns = nowNs() - t0
		case SHMDirect, XPMEMDirect:
			sum := c.sum
			t0 := nowNs()
			for k := int64(0); k < ops; k++ {
				if sum(src) != want {
					bad++
				}
			}
			ns = nowNs() - t0
			out.Checked += ops
		case CMACopy:
			t0 := nowNs()
			for k := int64(0); k < ops && err == nil; k++ {
				var n int
				n, err = sys.ReadRemote(c.peer.pid, dst, remoteAddr)
				calls += int64(n)
			}
			ns = nowNs() - t0
		case Pipe:
			ns, err = c.pipeIteration(dst, ops, &calls)
		}
		if err != nil {
			if c.method == Pipe {
				out.fatal = err
			}
			return failf(err)
		}
		if dst != nil { // verify the copy outside the timed region
			if memread.Sum64Generic(dst) != want {
				bad++
			}
			out.Checked++
		}
		if bad > 0 {
			out.Verified = false
			out.Error = fmt.Sprintf("iteration %d: %d of %d importer checksums differ from the exporter's %s", it, bad, ops, out.Checksum)
		}
		totalOps += ops
		out.Iterations = append(out.Iterations, Iteration{Ops: ops, Bytes: ops * c.size, Ns: ns, GBps: gbps(ops*c.size, ns)})
	}
	out.summarize()
	if calls > 0 && totalOps > 0 {
		out.CallsPerOp = float64(calls) / float64(totalOps)
	}
	return out
}

func gbps(bytes, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(bytes) / float64(ns)
}

// pipeIteration asks the exporter to write ops buffers into the pipe and
// reads them, each into dst; it returns the time from the request to the
// last byte read.
func (c *cell) pipeIteration(dst []byte, ops int64, calls *int64) (int64, error) {
	b, err := encodeRequest(request{Op: "pipe", Ops: ops})
	if err != nil {
		return 0, err
	}
	t0 := nowNs()
	if err := sys.SendMsgFile(c.peer.ctl, b, nil); err != nil {
		return 0, c.peer.gone(err)
	}
	for k := int64(0); k < ops; k++ {
		n, err := sys.ReadFull(c.peer.pipeR, dst)
		*calls += int64(n)
		if err != nil {
			return 0, c.peer.gone(err)
		}
	}
	ns := nowNs() - t0
	n, _, err := sys.RecvMsgFile(c.peer.ctl, c.peer.buf)
	if err != nil {
		return 0, c.peer.gone(err)
	}
	r, err := decodeReply(c.peer.buf[:n])
	if err != nil || !r.OK {
		return 0, fmt.Errorf("exporter: pipe write failed: %s", r.Err)
	}
	return ns, nil
}

// clockBase anchors nowNs; time.Since reads the monotonic clock through
// the vDSO (a system call per read would cost about a microsecond on a
// VM with page-table isolation and swamp a 4 KiB operation).
var clockBase = time.Now()

func nowNs() int64 { return int64(time.Since(clockBase)) }
