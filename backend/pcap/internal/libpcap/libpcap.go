//go:build pcap && linux

package libpcap

/*
#cgo LDFLAGS: -lpcap
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pcap/pcap.h>

// wpg_inject injects n frames of buf (frame i at i*stride, lens[i]
// bytes). A send the socket refuses for want of buffer space (ENOBUFS,
// EAGAIN) is retried after a pause, counted in *retries, up to max_retries
// times in a row. It returns the frames injected; fewer than n means an
// error, whose text is pcap_geterr's.
static int wpg_inject(pcap_t *p, const unsigned char *buf, int stride, const int *lens, int n,
		int max_retries, unsigned long long *retries) {
	int tries = 0;
	for (int i = 0; i < n;) {
		if (pcap_inject(p, buf + (size_t)i * stride, (size_t)lens[i]) >= 0) {
			i++;
			tries = 0;
			continue;
		}
		if ((errno == ENOBUFS || errno == EAGAIN) && tries < max_retries) {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
			tries++;
			(*retries)++;
			continue;
		}
		return i;
	}
	return n;
}

// wpg_open creates and activates a handle on dev for injection: a small
// capture buffer and a filter that accepts nothing, so the kernel queues
// no received frame on the socket. It returns the handle, or NULL with
// *status the pcap_activate status (0 when creation failed) and errbuf
// the text.
static pcap_t *wpg_open(const char *dev, int *status, char *errbuf) {
	*status = 0;
	pcap_t *p = pcap_create(dev, errbuf);
	if (p == NULL)
		return NULL;
	pcap_set_snaplen(p, 64);
	pcap_set_buffer_size(p, 1 << 16);
	pcap_set_immediate_mode(p, 1);
	int rc = pcap_activate(p);
	if (rc < 0) {
		*status = rc;
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	struct bpf_program prog;
	if (pcap_compile(p, &prog, "less 0", 1, PCAP_NETMASK_UNKNOWN) == 0) {
		pcap_setfilter(p, &prog);
		pcap_freecode(&prog);
	}
	return p;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// Version is libpcap's version string ("libpcap version 1.10.3 (with
// TPACKET_V3)").
func Version() string { return C.GoString(C.pcap_lib_version()) }

// Error is a libpcap failure: Op names the call, Status is pcap_activate's
// status (0 for other calls), Text is libpcap's message.
type Error struct {
	Op     string
	Status int
	Text   string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s: %s", e.Op, C.GoString(C.pcap_statustostr(C.int(e.Status))), e.Text)
	}
	return fmt.Sprintf("%s: %s", e.Op, e.Text)
}

// Unwrap matches os.ErrPermission for PCAP_ERROR_PERM_DENIED.
func (e *Error) Unwrap() error {
	if e.Status == C.PCAP_ERROR_PERM_DENIED {
		return os.ErrPermission
	}
	return nil
}

// Activation statuses the pcap backend turns into advice.
var (
	ErrNoSuchDevice = errors.New("no such device")
	ErrNotUp        = errors.New("interface not up")
)

// Is matches ErrNoSuchDevice and ErrNotUp.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNoSuchDevice:
		return e.Status == C.PCAP_ERROR_NO_SUCH_DEVICE
	case ErrNotUp:
		return e.Status == C.PCAP_ERROR_IFACE_NOT_UP
	}
	return false
}

// Injector is a libpcap handle with a staging area of batch frames of
// maxFrame bytes each in C memory: the caller renders into Buffers and
// hands the lengths to Inject, which crosses into C once per batch.
type Injector struct {
	p       *C.pcap_t
	buf     *C.uchar
	stride  int
	views   [][]byte
	lens    []C.int
	retries C.ulonglong
}

// Open activates dev for injection with room for batch frames of up to
// maxFrame bytes.
func Open(dev string, batch, maxFrame int) (*Injector, error) {
	cdev := C.CString(dev)
	defer C.free(unsafe.Pointer(cdev))
	errbuf := (*C.char)(C.malloc(C.PCAP_ERRBUF_SIZE))
	defer C.free(unsafe.Pointer(errbuf))
	var status C.int
	p := C.wpg_open(cdev, &status, errbuf)
	if p == nil {
		op := "pcap_create"
		if status != 0 {
			op = "pcap_activate"
		}
		return nil, &Error{Op: op, Status: int(status), Text: C.GoString(errbuf)}
	}
	stride := (maxFrame + 63) &^ 63
	in := &Injector{p: p, stride: stride, views: make([][]byte, batch), lens: make([]C.int, batch)}
	in.buf = (*C.uchar)(C.calloc(C.size_t(batch), C.size_t(stride)))
	all := unsafe.Slice((*byte)(unsafe.Pointer(in.buf)), batch*stride)
	for i := range in.views {
		in.views[i] = all[i*stride : i*stride+maxFrame : i*stride+maxFrame]
	}
	return in, nil
}

// Buffers are the staging buffers, each maxFrame bytes.
func (in *Injector) Buffers() [][]byte { return in.views }

// Inject sends the first len(lens) buffers, lens[i] bytes each, and
// returns how many went out; fewer means an error (libpcap's text).
func (in *Injector) Inject(lens []int, maxRetries int) (int, error) {
	for i, l := range lens {
		in.lens[i] = C.int(l)
	}
	n := int(C.wpg_inject(in.p, in.buf, C.int(in.stride), &in.lens[0], C.int(len(lens)), C.int(maxRetries), &in.retries))
	if n < len(lens) {
		return n, &Error{Op: "pcap_inject", Text: C.GoString(C.pcap_geterr(in.p))}
	}
	return n, nil
}

// Retries counts the sends retried after the socket had no buffer space.
func (in *Injector) Retries() uint64 { return uint64(in.retries) }

// Close closes the handle and frees the staging area; it is idempotent.
func (in *Injector) Close() {
	if in.p != nil {
		C.pcap_close(in.p)
		C.free(unsafe.Pointer(in.buf))
		in.p, in.buf, in.views = nil, nil, nil
	}
}
