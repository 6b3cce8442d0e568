package dmabuf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Class directory names of ikwzm's driver under /sys/class.
const (
	// ClassUDmaBuf is the class of u-dma-buf v2.0.0 and later.
	ClassUDmaBuf = "u-dma-buf"
	// ClassOld is the class of the driver up to v1.4.8, when it was
	// called udmabuf.
	ClassOld = "udmabuf"
)

// Classes are the class names searched, newest first.
var Classes = []string{ClassUDmaBuf, ClassOld}

// MainlineNode is the mainline driver's misc device, below the /dev root.
const MainlineNode = "udmabuf"

// maxAttr bounds one attribute read: sysfs attributes are at most a page.
const maxAttr = 4096

// FS reads DMA-buffer devices below a sysfs root and a /dev root, so that
// tests can point it at fixture trees. The zero value reads /sys and
// /dev.
type FS struct {
	Sys string // "" = /sys
	Dev string // "" = /dev
}

func (f FS) sys(p ...string) string {
	root := f.Sys
	if root == "" {
		root = "/sys"
	}
	return filepath.Join(append([]string{root}, p...)...)
}

func (f FS) dev(p ...string) string {
	root := f.Dev
	if root == "" {
		root = "/dev"
	}
	return filepath.Join(append([]string{root}, p...)...)
}

// Device is one u-dma-buf buffer as its sysfs directory describes it.
// Optional attributes (present only in some builds) are pointers: nil is
// "not there", which differs from zero.
type Device struct {
	Name  string `json:"name"`  // udmabuf0
	Class string `json:"class"` // u-dma-buf, or udmabuf for the old driver
	Dir   string `json:"sysfs"` // its sysfs directory
	Node  string `json:"node"`  // its device node (/dev/NAME)

	DriverVersion string  `json:"driver_version,omitempty"`
	Size          uint64  `json:"size"`
	PhysAddr      *uint64 `json:"phys_addr,omitempty"`
	SyncMode      *int    `json:"sync_mode,omitempty"`
	SyncOffset    *uint64 `json:"sync_offset,omitempty"`
	SyncSize      *uint64 `json:"sync_size,omitempty"`
	SyncDirection *int    `json:"sync_direction,omitempty"`
	SyncOwner     *int    `json:"sync_owner,omitempty"`
	SyncForCPU    *uint64 `json:"sync_for_cpu,omitempty"`
	SyncForDevice *uint64 `json:"sync_for_device,omitempty"`
	DMACoherent   *bool   `json:"dma_coherent,omitempty"`
	QuirkMmapMode *int    `json:"quirk_mmap_mode,omitempty"`
	IoctlVersion  *int    `json:"ioctl_version,omitempty"`

	// Attributes is every attribute file of the directory as read (value
	// trimmed), including those this package does not interpret.
	Attributes map[string]string `json:"attributes"`
}

// Coherent reports whether the device says its buffer is DMA-coherent
// (dma_coherent 1): then no manual cache maintenance is needed.
func (d *Device) Coherent() bool { return d.DMACoherent != nil && *d.DMACoherent }

// Mainline is the mainline driver as /dev and sysfs show it.
type Mainline struct {
	Node    string `json:"node"`    // /dev/udmabuf
	Present bool   `json:"present"` // the node exists
	// SizeLimitMB and ListLimit are the module parameters
	// (/sys/module/udmabuf/parameters); nil when not readable.
	SizeLimitMB *int64 `json:"size_limit_mb,omitempty"`
	ListLimit   *int64 `json:"list_limit,omitempty"`
	Mode        string `json:"mode,omitempty"` // the node's permissions, e.g. crw-------
}

// Heap is a DMA-buf heap (/dev/dma_heap/NAME).
type Heap struct {
	Name string `json:"name"`
	Node string `json:"node"`
}

// Inventory is every DMA buffer device of both kinds on the machine.
type Inventory struct {
	Devices  []Device `json:"devices"`
	Mainline Mainline `json:"mainline"`
	Heaps    []Heap   `json:"heaps"`
	// Problems are attributes that did not parse, each naming its file.
	Problems []string `json:"problems,omitempty"`
}

// Inventory lists the u-dma-buf devices of both class names, the mainline
// driver and its limits, and the DMA-buf heaps. A missing class or
// directory is not an error (nothing of that kind is loaded).
func (f FS) Inventory() (Inventory, error) {
	inv := Inventory{Devices: []Device{}, Heaps: []Heap{}}
	for _, class := range Classes {
		names, err := listDir(f.sys("class", class))
		if err != nil {
			return inv, err
		}
		for _, name := range names {
			d, err := f.Device(class, name)
			if err != nil {
				inv.Problems = append(inv.Problems, err.Error())
			}
			inv.Devices = append(inv.Devices, d)
		}
	}
	inv.Mainline = f.Mainline()
	heaps, err := listDir(f.dev("dma_heap"))
	if err != nil {
		return inv, err
	}
	for _, h := range heaps {
		inv.Heaps = append(inv.Heaps, Heap{Name: h, Node: f.dev("dma_heap", h)})
	}
	return inv, nil
}

// listDir returns the sorted entry names of dir; a missing dir is empty.
func listDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// Device reads and parses the sysfs directory of u-dma-buf device name
// in class (ClassUDmaBuf or ClassOld). The Device is filled as far as the
// attributes parsed; the error names every one that did not.
func (f FS) Device(class, name string) (Device, error) {
	dir := f.sys("class", class, name)
	attrs, err := ReadAttributes(dir)
	if err != nil {
		return Device{Name: name, Class: class, Dir: dir, Node: f.dev(name)}, err
	}
	d, err := ParseDevice(name, class, attrs)
	d.Dir, d.Node = dir, f.dev(name)
	if err != nil {
		return d, fmt.Errorf("%s: %w", dir, err)
	}
	return d, nil
}

// Lookup finds the u-dma-buf device called name under either class name.
func (f FS) Lookup(name string) (Device, bool, error) {
	for _, class := range Classes {
		if st, err := os.Stat(f.sys("class", class, name)); err == nil && st.IsDir() {
			d, err := f.Device(class, name)
			return d, true, err
		}
	}
	return Device{}, false, nil
}

// skipAttr are the files of a device directory that are not the driver's
// attributes.
var skipAttr = map[string]bool{"uevent": true}

// ReadAttributes reads every regular file of a sysfs device directory
// (bounded to a page each), trimmed. A file that cannot be read (a
// write-only attribute) is left out.
func ReadAttributes(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read device directory: %w", err)
	}
	attrs := map[string]string{}
	for _, e := range ents {
		if skipAttr[e.Name()] {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, e.Name())) // follows links
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		v, err := readAttr(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		attrs[e.Name()] = v
	}
	return attrs, nil
}

func readAttr(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, maxAttr)
	n, err := f.Read(b)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(string(b[:n])), nil
}

// ParseDevice interprets the attributes of one u-dma-buf device in the
// formats the driver prints (size decimal; phys_addr "0x" and hex, or bare
// hex as old drivers print it; sync_offset hex or decimal; the rest
// decimal). Every attribute that does not parse is named in the error.
func ParseDevice(name, class string, attrs map[string]string) (Device, error) {
	d := Device{Name: name, Class: class, Attributes: attrs}
	var bad []string
	fail := func(attr, v string, err error) { bad = append(bad, fmt.Sprintf("%s %q: %v", attr, v, err)) }
	d.DriverVersion = attrs["driver_version"]
	if v, ok := attrs["size"]; ok {
		n, err := parseUint(v)
		if err != nil {
			fail("size", v, err)
		}
		d.Size = n
	} else {
		bad = append(bad, "size: missing (is this a u-dma-buf device directory?)")
	}
	u64 := func(attr string, hex bool, dst **uint64) {
		v, ok := attrs[attr]
		if !ok {
			return
		}
		var n uint64
		var err error
		if hex {
			n, err = parseHex(v)
		} else {
			n, err = parseUint(v)
		}
		if err != nil {
			fail(attr, v, err)
			return
		}
		*dst = &n
	}
	small := func(attr string, lo, hi int, dst **int) {
		v, ok := attrs[attr]
		if !ok {
			return
		}
		n, err := parseUint(v)
		if err != nil || n < uint64(lo) || n > uint64(hi) {
			if err == nil {
				err = fmt.Errorf("want %d … %d", lo, hi)
			}
			fail(attr, v, err)
			return
		}
		i := int(n)
		*dst = &i
	}
	u64("phys_addr", true, &d.PhysAddr)
	u64("sync_offset", false, &d.SyncOffset)
	u64("sync_size", false, &d.SyncSize)
	u64("sync_for_cpu", false, &d.SyncForCPU)
	u64("sync_for_device", false, &d.SyncForDevice)
	small("sync_mode", 0, MaxSyncMode, &d.SyncMode)
	small("sync_direction", 0, 2, &d.SyncDirection)
	small("sync_owner", 0, 1, &d.SyncOwner)
	small("quirk_mmap_mode", 0, 4, &d.QuirkMmapMode)
	small("ioctl_version", 0, 255, &d.IoctlVersion)
	var coh *int
	small("dma_coherent", 0, 1, &coh)
	if coh != nil {
		b := *coh == 1
		d.DMACoherent = &b
	}
	if len(bad) > 0 {
		return d, errors.New(strings.Join(bad, "; "))
	}
	return d, nil
}

// parseUint parses a decimal number, or a hex one with a 0x prefix (the
// driver prints sync_offset as 0x%llx in some versions).
func parseUint(s string) (uint64, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseHex parses a hex number with or without its 0x prefix (%pad
// prints 0x and zero-padded hex; the article reads it with %x).
func parseHex(s string) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return strconv.ParseUint(s, 16, 64)
}

// modeString spells a node's mode as ls does: crw-------.
func modeString(m fs.FileMode) string {
	kind := "-"
	switch {
	case m&fs.ModeCharDevice != 0:
		kind = "c"
	case m&fs.ModeDevice != 0:
		kind = "b"
	}
	return kind + m.Perm().String()[1:]
}

// Mainline reads the mainline driver's node and module parameters.
func (f FS) Mainline() Mainline {
	m := Mainline{Node: f.dev(MainlineNode)}
	if st, err := os.Stat(m.Node); err == nil {
		m.Present = true
		m.Mode = modeString(st.Mode())
	}
	param := func(name string) *int64 {
		v, err := readAttr(f.sys("module", "udmabuf", "parameters", name))
		if err != nil {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil
		}
		return &n
	}
	m.SizeLimitMB = param("size_limit_mb")
	m.ListLimit = param("list_limit")
	return m
}
