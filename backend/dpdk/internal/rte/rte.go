//go:build dpdk && linux

package rte

/*
#cgo pkg-config: libdpdk
// The hot path's functions never call into Go, and the lengths Commit
// passes are not kept.
#cgo nocallback wpg_tx_fill
#cgo nocallback wpg_tx_push
#cgo nocallback wpg_tx_commit
#cgo noescape wpg_tx_commit
#include "wpg_rte.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Headroom is the space DPDK keeps in front of a frame in an mbuf.
const Headroom = C.RTE_PKTMBUF_HEADROOM

// Error is a failed DPDK call: Op names it, Errno is DPDK's error code
// (rte_errno, or the negated return value) and unwraps as a syscall.Errno.
type Error struct {
	Op    string
	Errno int
	// Log is the tail of the EAL's log at the time, "" when it said
	// nothing.
	Log string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Op, C.GoString(C.rte_strerror(C.int(e.Errno))))
	if e.Log != "" {
		msg += " (the EAL's log: " + e.Log + ")" // its lines begin "EAL: " themselves
	}
	return msg
}

// Unwrap gives the system error (ENODEV, EINVAL, …) where the code is one.
func (e *Error) Unwrap() error {
	if e.Errno > 0 && e.Errno < C.__ELASTERROR {
		return syscall.Errno(e.Errno)
	}
	return nil
}

func rteErr(op string, code int) error {
	if code < 0 {
		code = -code
	}
	return &Error{Op: op, Errno: code}
}

// LogTail returns the last lines the EAL logged (up to about 1 KiB), one
// line per entry, for errors.
func LogTail() string {
	var buf [1024]C.char
	n := C.wpg_log_tail(&buf[0], C.size_t(len(buf)))
	s := C.GoStringN(&buf[0], C.int(n))
	if len(s) == len(buf) {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

var eal struct {
	once sync.Once
	args []string
	err  error
}

// ErrAlreadyInitialised is returned (wrapped) by Init when the EAL of this
// process was initialised with other arguments: DPDK cannot initialise it
// twice.
var ErrAlreadyInitialised = errors.New("the EAL of this process is initialised already")

// Init initialises the EAL with args (without the program name) the first
// time it is called in the process; later calls with the same args return
// the first call's result, calls with other args an error wrapping
// ErrAlreadyInitialised. The EAL pins the thread that initialises it to
// its main lcore, so it runs on a thread of its own that exits afterwards.
func Init(args []string) error {
	first := false
	eal.once.Do(func() {
		first = true
		eal.args = slices.Clone(args)
		done := make(chan error, 1)
		go func() {
			// Never unlocked: the thread ends with the goroutine,
			// taking the EAL's CPU affinity with it.
			runtime.LockOSThread()
			done <- initEAL(args)
		}()
		eal.err = <-done
	})
	if !first && !slices.Equal(args, eal.args) {
		state := "initialised"
		if eal.err != nil {
			state = "failed to initialise"
		}
		return fmt.Errorf("%w: it %s with EAL arguments %q and DPDK cannot initialise it again; this run asked for %q: give the same arguments, or run it in a process of its own", ErrAlreadyInitialised, state, strings.Join(eal.args, " "), strings.Join(args, " "))
	}
	return eal.err
}

// Args returns the arguments the EAL was initialised with, nil before Init.
func Args() []string { return slices.Clone(eal.args) }

func initEAL(args []string) error {
	if C.wpg_log_open() != 0 {
		return errors.New("rte_openlog_stream: cannot capture the EAL's log")
	}
	argv := make([]*C.char, 0, len(args)+2)
	argv = append(argv, C.CString("wpg"))
	for _, a := range args {
		argv = append(argv, C.CString(a))
	}
	// rte_eal_init keeps pointers into argv (and permutes it): the
	// strings and the array live in C memory for the process's life.
	cargv := (**C.char)(C.malloc(C.size_t(len(argv)+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	view := unsafe.Slice(cargv, len(argv)+1)
	copy(view, argv)
	view[len(argv)] = nil
	if rc := C.rte_eal_init(C.int(len(argv)), cargv); rc < 0 {
		return &Error{Op: "rte_eal_init", Errno: int(C.wpg_errno()), Log: LogTail()}
	}
	return nil
}

// Version is DPDK's version string ("DPDK 22.11.4").
func Version() string { return C.GoString(C.wpg_version()) }

// Port describes an ethdev port.
type Port struct {
	ID     uint16
	Name   string // device name: "net_null0", "0000:3b:00.0"
	Driver string // "net_null", "net_ice", …
	// MaxRxQueues and MaxTxQueues are the device's queue limits.
	MaxRxQueues, MaxTxQueues int
	MaxTxDesc, MaxRxDesc     int
	// Socket is the port's NUMA socket, -1 when unknown.
	Socket int
	MTU    int
}

// Ports lists the ports of the EAL (after Init).
func Ports() []Port {
	var ports []Port
	for p := C.wpg_port_next(0); p < C.RTE_MAX_ETHPORTS; p = C.wpg_port_next(p + 1) {
		if info, err := PortInfo(uint16(p)); err == nil {
			ports = append(ports, info)
		}
	}
	return ports
}

// PortInfo describes port id.
func PortInfo(id uint16) (Port, error) {
	var d C.struct_wpg_devinfo
	if rc := C.wpg_dev_info(C.uint16_t(id), &d); rc != 0 {
		return Port{}, rteErr(fmt.Sprintf("rte_eth_dev_info_get(port %d)", id), int(rc))
	}
	return Port{
		ID: id, Name: C.GoString(&d.name[0]), Driver: C.GoString(&d.driver[0]),
		MaxRxQueues: int(d.max_rx), MaxTxQueues: int(d.max_tx),
		MaxTxDesc: int(d.tx_desc_max), MaxRxDesc: int(d.rx_desc_max),
		Socket: int(d.socket), MTU: int(d.mtu),
	}, nil
}

// Setup configures port with rx RX and tx TX queues of rxDesc and txDesc
// descriptors (adjusted to the device's limits; the effective depths are
// returned), the RX queues filling from rxPool, on NUMA socket socket,
// and starts it.
func Setup(port uint16, rx, tx, rxDesc, txDesc int, socket int, rxPool *Pool) (effRx, effTx int, err error) {
	rd, td := C.uint16_t(rxDesc), C.uint16_t(txDesc)
	var pool *C.struct_rte_mempool
	if rxPool != nil {
		pool = rxPool.p
	}
	var step *C.char
	if rc := C.wpg_port_setup(C.uint16_t(port), C.uint16_t(rx), C.uint16_t(tx), &rd, &td, C.int(socket), pool, &step); rc != 0 {
		e := rteErr(fmt.Sprintf("%s(port %d)", C.GoString(step), port), int(rc)).(*Error)
		e.Log = LogTail()
		return 0, 0, e
	}
	return int(rd), int(td), nil
}

// Stop stops port (its queues release their mbufs); it can be set up again.
func Stop(port uint16) error {
	if rc := C.rte_eth_dev_stop(C.uint16_t(port)); rc != 0 {
		return rteErr(fmt.Sprintf("rte_eth_dev_stop(port %d)", port), int(rc))
	}
	return nil
}

// Link is a port's link state.
type Link struct {
	SpeedMbps  uint32
	Up         bool
	FullDuplex bool
}

// LinkOf reads port's link without waiting.
func LinkOf(port uint16) Link {
	var l C.struct_wpg_link
	C.wpg_link_get(C.uint16_t(port), &l)
	return Link{SpeedMbps: uint32(l.speed), Up: l.up != 0, FullDuplex: l.duplex != 0}
}

// Stats are a port's basic counters (rte_eth_stats).
type Stats struct {
	IPackets, OPackets, IBytes, OBytes, IMissed, IErrors, OErrors, RxNoMbuf uint64
}

// StatsOf reads port's counters.
func StatsOf(port uint16) (Stats, error) {
	var s C.struct_wpg_stats
	if rc := C.wpg_stats_get(C.uint16_t(port), &s); rc != 0 {
		return Stats{}, rteErr(fmt.Sprintf("rte_eth_stats_get(port %d)", port), int(rc))
	}
	return Stats{uint64(s.ipackets), uint64(s.opackets), uint64(s.ibytes), uint64(s.obytes), uint64(s.imissed), uint64(s.ierrors), uint64(s.oerrors), uint64(s.rx_nombuf)}, nil
}

// RegisterThread makes the calling OS thread an EAL thread with an lcore
// id of its own, so that mempool caches work on it; it returns the lcore
// id. The caller keeps the goroutine locked to the thread.
func RegisterThread() (int, error) {
	if rc := C.rte_thread_register(); rc != 0 {
		return -1, &Error{Op: "rte_thread_register", Errno: int(C.wpg_errno()), Log: LogTail()}
	}
	return int(C.wpg_lcore_id()), nil
}

// UnregisterThread gives the calling thread's lcore id back.
func UnregisterThread() { C.rte_thread_unregister() }

// Pool is an mbuf pool.
type Pool struct {
	p    *C.struct_rte_mempool
	Name string
	Size int
	Room int // data room of an mbuf, headroom included
}

// NewPool creates a pool of n mbufs with data rooms of room bytes (headroom
// included) and a per-lcore cache of cache mbufs on NUMA socket socket
// (-1: any).
func NewPool(name string, n, cache, room, socket int) (*Pool, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	p := C.wpg_pool_create(cname, C.uint(n), C.uint(cache), C.uint16_t(room), C.int(socket))
	if p == nil {
		return nil, &Error{Op: fmt.Sprintf("rte_pktmbuf_pool_create(%s, %d mbufs of %d bytes, socket %d)", name, n, room, socket), Errno: int(C.wpg_errno()), Log: LogTail()}
	}
	return &Pool{p: p, Name: name, Size: n, Room: room}, nil
}

// Free frees the pool; every mbuf must be back in it.
func (p *Pool) Free() {
	if p.p != nil {
		C.rte_mempool_free(p.p)
		p.p = nil
	}
}

// TxQueue is one worker's TX queue of a started port, with mbufs from its
// own pool. It is used by one thread.
type TxQueue struct {
	q        *C.struct_wpg_txq
	qp       C.uintptr_t          // q, for the hot path's calls (no pointer check)
	m        []*C.struct_rte_mbuf // q.m
	maxFrame int
}

// dataOff is where a frame starts in an mbuf (WPG_DATA); maxRoom is the
// most bytes an mbuf's data room holds (its length is a uint16_t).
const (
	dataOff = C.sizeof_struct_rte_mbuf + C.RTE_PKTMBUF_HEADROOM
	maxRoom = 1<<16 - 1
)

// A Go int is 8 bytes here: Commit hands the engine's lengths ([]int) to C as int64_t.
var _ [unsafe.Sizeof(int(0)) - 8]byte

func cAlloc[T any](n int) (*T, []T) {
	var zero T
	p := (*T)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero))))
	return p, unsafe.Slice(p, n)
}

// NewTxQueue prepares sending on queue of port with bursts of up to burst
// frames of up to maxFrame bytes (at most maxRoom, an mbuf's most), from
// pool.
func NewTxQueue(port uint16, queue int, pool *Pool, burst, maxFrame int) *TxQueue {
	maxFrame = min(maxFrame, maxRoom)
	q, _ := cAlloc[C.struct_wpg_txq](1)
	q.port, q.queue, q.cap, q.pool = C.uint16_t(port), C.uint16_t(queue), C.uint32_t(burst), pool.p
	t := &TxQueue{q: q, qp: C.uintptr_t(uintptr(unsafe.Pointer(q))), maxFrame: maxFrame}
	q.m, t.m = cAlloc[*C.struct_rte_mbuf](burst)
	return t
}

// Reserve fills bufs with up to len(bufs) mbufs' data rooms, each
// maxFrame bytes; Commit's call tops them up, so a Reserve after a Commit
// does not cross into C. It returns 0 when the pool is empty.
func (t *TxQueue) Reserve(bufs [][]byte) int {
	want := min(len(bufs), int(t.q.cap))
	have := int(t.q.have)
	if have < want {
		have = int(C.wpg_tx_fill(t.qp, C.uint32_t(want)))
	}
	n := min(have, want)
	mf := min(uint(t.maxFrame), maxRoom) // t.maxFrame already is: no check in the loop
	for i, m := range t.m[:n] {
		bufs[i] = (*[maxRoom]byte)(unsafe.Add(unsafe.Pointer(m), dataOff))[:mf:mf]
	}
	return n
}

// Commit sends the first len(lens) reserved frames, lens[i] bytes each,
// offering them to the device up to tries times; it returns how many are
// still unsent (offer them again with Push).
//
// The lengths go to C as they are (no copy): a pointer to memory without
// pointers, which cgo does not check.
func (t *TxQueue) Commit(lens []int, tries int) int {
	if len(lens) == 0 {
		return int(C.wpg_tx_commit(t.qp, nil, 0, C.uint32_t(tries)))
	}
	return int(C.wpg_tx_commit(t.qp, (*C.int64_t)(unsafe.Pointer(&lens[0])), C.uint32_t(len(lens)), C.uint32_t(tries)))
}

// Push offers the rest of the last burst again (see Commit).
func (t *TxQueue) Push(tries int) int { return int(C.wpg_tx_push(t.qp, C.uint32_t(tries))) }

// TxCounters are a TxQueue's counters.
type TxCounters struct {
	Bursts     uint64 // bursts committed
	Calls      uint64 // rte_eth_tx_burst calls
	ShortCalls uint64 // calls the device took fewer frames of than offered (then retried)
	AllocFails uint64 // bulk allocations the pool could not satisfy
}

// Counters returns the queue's counters.
func (t *TxQueue) Counters() TxCounters {
	return TxCounters{uint64(t.q.bursts), uint64(t.q.calls), uint64(t.q.short_calls), uint64(t.q.alloc_fail)}
}

// Close gives every mbuf the queue holds back to the pool and frees the
// queue's arrays; it is idempotent.
func (t *TxQueue) Close() {
	if t.q == nil {
		return
	}
	C.wpg_tx_release(t.q)
	C.free(unsafe.Pointer(t.q.m))
	C.free(unsafe.Pointer(t.q))
	t.q, t.m = nil, nil
}

// RxQueue is an RX queue of a started port, used by one thread.
type RxQueue struct {
	q    *C.struct_wpg_rxq
	data []*C.uint8_t
	lens []C.uint32_t
}

// NewRxQueue prepares receiving on queue of port in bursts of up to burst.
func NewRxQueue(port uint16, queue, burst int) *RxQueue {
	q, _ := cAlloc[C.struct_wpg_rxq](1)
	q.port, q.queue, q.cap = C.uint16_t(port), C.uint16_t(queue), C.uint32_t(burst)
	r := &RxQueue{q: q}
	q.m, _ = cAlloc[*C.struct_rte_mbuf](burst)
	q.data, r.data = cAlloc[*C.uint8_t](burst)
	q.len, r.lens = cAlloc[C.uint32_t](burst)
	return r
}

// Next frees the frames of the last call and fills views with the next
// burst's (valid until the next call); it returns how many, 0 when none
// waited.
func (r *RxQueue) Next(views [][]byte) int {
	n := int(C.wpg_rx_next(r.q, C.uint32_t(len(views))))
	for i := range n {
		views[i] = unsafe.Slice((*byte)(r.data[i]), int(r.lens[i]))
	}
	return n
}

// Polls is the number of rte_eth_rx_burst calls; Segmented the frames
// dropped because they came in chained mbufs.
func (r *RxQueue) Polls() (polls, segmented uint64) {
	return uint64(r.q.polls), uint64(r.q.segmented)
}

// Close frees the last burst and the queue's arrays; it is idempotent.
func (r *RxQueue) Close() {
	if r.q == nil {
		return
	}
	C.wpg_rx_release(r.q)
	C.free(unsafe.Pointer(r.q.m))
	C.free(unsafe.Pointer(r.q.data))
	C.free(unsafe.Pointer(r.q.len))
	C.free(unsafe.Pointer(r.q))
	r.q = nil
}
