package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Env is the environment record that wpg reports and docs/perf.md embed.
// Its JSON field names are part of wpg's report schema.
type Env struct {
	Kernel   string `json:"kernel"`             // /proc/sys/kernel/osrelease
	KernelV  string `json:"kernel_version"`     // /proc/sys/kernel/version
	CPUModel string `json:"cpu_model"`          // model name of the first CPU
	CPUs     int    `json:"cpus"`               // online logical CPUs
	Cores    int    `json:"cores"`              // physical cores (unique package/core id)
	Allowed  string `json:"allowed_cpus"`       // CPUs this process may use (list form, e.g. "0-1")
	NUMA     int    `json:"numa_nodes"`         // NUMA nodes (1 when /sys lists none)
	Governor string `json:"governor,omitempty"` // cpufreq governor of cpu0; empty when there is no cpufreq (VMs)
	// ConstantTSC and NonstopTSC are the CPU flags that make the TSC
	// usable as a clock (invariant TSC).
	ConstantTSC bool `json:"constant_tsc"`
	NonstopTSC  bool `json:"nonstop_tsc"`
	// PipeMaxSize is /proc/sys/fs/pipe-max-size in bytes.
	PipeMaxSize *int64 `json:"pipe_max_size,omitempty"`
	// MemlockLimit is this process's soft RLIMIT_MEMLOCK in bytes, -1 for
	// unlimited; nil when unknown.
	MemlockLimit *int64 `json:"memlock_limit,omitempty"`
	// Interface describes the interface asked for, nil when none.
	Interface *Iface `json:"interface,omitempty"`
	// Warnings lists what could not be read (and why).
	Warnings []string `json:"warnings,omitempty"`
}

// Iface describes one network interface.
type Iface struct {
	Name      string `json:"name"`
	Driver    string `json:"driver,omitempty"` // from device/driver; empty for virtual devices
	Virtual   bool   `json:"virtual"`          // no backing device (lo, veth, bridge, …)
	Operstate string `json:"operstate,omitempty"`
	MTU       int    `json:"mtu"`
	// SpeedMbps is the link speed; nil when the driver reports none (lo,
	// a link that is down).
	SpeedMbps *int `json:"speed_mbps,omitempty"`
	TXQueues  int  `json:"tx_queues"`
	RXQueues  int  `json:"rx_queues"`
	// NUMANode of the device; -1 when unknown (virtual devices, one-node
	// machines).
	NUMANode int `json:"numa_node"`
	// XPS maps "tx-N" to its xps_cpus mask as the kernel prints it; empty
	// when XPS is not configured or not available.
	XPS map[string]string `json:"xps,omitempty"`
	// RPS maps "rx-N" to its rps_cpus mask when receive packet steering
	// hands that queue's packets to other CPUs; empty when it does not.
	RPS map[string]string `json:"rps,omitempty"`
	// TxQueueLen is the qdisc queue length (tx_queue_len).
	TxQueueLen int `json:"tx_queue_len"`
	// Index and Address are the interface's ifindex and hardware address
	// as /sys gives them (0 and "" where it does not), for telling it
	// from another namespace's interface of the same name.
	Index   int    `json:"-"`
	Address string `json:"-"`
}

// FS reads /proc and /sys below Root ("/" for the running machine).
type FS struct {
	Root string
}

// HostFS returns the FS of the running machine (Root "/"). Callers that
// read the machine take an FS, so tests pass one rooted at a fixture.
func HostFS() FS { return FS{Root: "/"} }

func (f FS) path(p string) string { return filepath.Join(f.Root, p) }

func (f FS) read(p string) (string, error) {
	b, err := os.ReadFile(f.path(p))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Environment returns the environment record of the running machine, with
// iface described when it is not empty. What cannot be read is listed in
// Env.Warnings rather than failing.
func Environment(iface string) Env {
	e, err := HostFS().Environment(iface)
	if err != nil {
		e.Warnings = append(e.Warnings, err.Error())
	}
	return e
}

// Environment reads the environment record below f.Root. The error is
// non-nil only when iface was asked for and cannot be described (it names
// the interfaces that exist); the rest of the record is filled anyway.
func (f FS) Environment(iface string) (Env, error) {
	var e Env
	warn := func(what string, err error) {
		e.Warnings = append(e.Warnings, fmt.Sprintf("%s: %v", what, err))
	}
	var err error
	if e.Kernel, err = f.read("proc/sys/kernel/osrelease"); err != nil {
		warn("kernel release", err)
	}
	e.KernelV, _ = f.read("proc/sys/kernel/version")
	if s, err := f.read("proc/cpuinfo"); err != nil {
		warn("cpuinfo", err)
	} else {
		ci := ParseCPUInfo(s)
		e.CPUModel, e.Cores = ci.Model, ci.Cores
		e.ConstantTSC, e.NonstopTSC = ci.Flags["constant_tsc"], ci.Flags["nonstop_tsc"]
		e.CPUs = ci.Processors
	}
	if s, err := f.read("sys/devices/system/cpu/online"); err == nil {
		if cpus, err := ParseCPUList(s); err == nil {
			e.CPUs = len(cpus)
		}
	}
	if s, err := f.read("proc/self/status"); err != nil {
		warn("process status", err)
	} else {
		e.Allowed = ParseStatusField(s, "Cpus_allowed_list")
	}
	e.NUMA = 1
	if s, err := f.read("sys/devices/system/node/online"); err == nil {
		if nodes, err := ParseCPUList(s); err == nil && len(nodes) > 0 {
			e.NUMA = len(nodes)
		}
	}
	e.Governor, _ = f.read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if s, err := f.read("proc/sys/fs/pipe-max-size"); err == nil {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			e.PipeMaxSize = &v
		}
	}
	if s, err := f.read("proc/self/limits"); err != nil {
		warn("limits", err)
	} else if v, ok := ParseLimit(s, "Max locked memory"); ok {
		e.MemlockLimit = &v
	}
	if iface != "" {
		ifc, err := f.Interface(iface)
		if err != nil {
			return e, err
		}
		e.Interface = &ifc
	}
	return e, nil
}

// ErrNoInterface is wrapped by errors for an interface that does not exist.
var ErrNoInterface = errors.New("no such network interface")

// Interfaces lists the network interfaces below f.Root, sorted.
func (f FS) Interfaces() []string {
	ents, _ := os.ReadDir(f.path("sys/class/net"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// Interface describes the network interface name.
func (f FS) Interface(name string) (Iface, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return Iface{}, fmt.Errorf("interface %q: invalid name", name)
	}
	dir := "sys/class/net/" + name
	if _, err := os.Stat(f.path(dir)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Iface{}, fmt.Errorf("interface %q: %w; existing interfaces: %s", name, ErrNoInterface, strings.Join(f.Interfaces(), ", "))
		}
		return Iface{}, fmt.Errorf("interface %q: %w", name, err)
	}
	ifc := Iface{Name: name, NUMANode: -1}
	ifc.Operstate, _ = f.read(dir + "/operstate")
	ifc.MTU = f.readInt(dir+"/mtu", 0)
	ifc.TxQueueLen = f.readInt(dir+"/tx_queue_len", 0)
	ifc.Index = f.readInt(dir+"/ifindex", 0)
	ifc.Address, _ = f.read(dir + "/address")
	if s, err := f.read(dir + "/speed"); err == nil {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			ifc.SpeedMbps = &v
		}
	}
	if _, err := os.Stat(f.path(dir + "/device")); err != nil {
		ifc.Virtual = true
		if f.Root == "/" && haveLiveDriver {
			// Virtual devices have no device/driver link; ask the
			// kernel (ethtool) on the running machine.
			ifc.Driver, _ = liveDriver(name)
		}
	} else {
		if l, err := os.Readlink(f.path(dir + "/device/driver")); err == nil {
			ifc.Driver = filepath.Base(l)
		}
		ifc.NUMANode = f.readInt(dir+"/device/numa_node", -1)
	}
	ents, _ := os.ReadDir(f.path(dir + "/queues"))
	for _, q := range ents {
		switch {
		case strings.HasPrefix(q.Name(), "tx-"):
			ifc.TXQueues++
			f.cpuMask(&ifc.XPS, dir+"/queues/"+q.Name(), "xps_cpus")
		case strings.HasPrefix(q.Name(), "rx-"):
			ifc.RXQueues++
			f.cpuMask(&ifc.RPS, dir+"/queues/"+q.Name(), "rps_cpus")
		}
	}
	return ifc, nil
}

// cpuMask records queue's CPU mask file in *m (keyed by the queue's name)
// when it is set, i.e. has a non-zero bit.
func (f FS) cpuMask(m *map[string]string, queue, file string) {
	s, err := f.read(queue + "/" + file)
	if err != nil || strings.Trim(s, "0,") == "" {
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[filepath.Base(queue)] = s
}

// DeviceNUMANode is the NUMA node of device dev on bus
// (sys/bus/BUS/devices/DEV/numa_node), which every network namespace
// shares; -1 when unknown, negative, or when a name would leave the tree.
func (f FS) DeviceNUMANode(bus, dev string) int {
	for _, s := range []string{bus, dev} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\x00") {
			return -1
		}
	}
	return max(f.readInt("sys/bus/"+bus+"/devices/"+dev+"/numa_node", -1), -1)
}

func (f FS) readInt(p string, def int) int {
	s, err := f.read(p)
	if err != nil {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return v
}

// NodeCPUs lists the CPUs of NUMA node (sys/devices/system/node/nodeN/cpulist).
func (f FS) NodeCPUs(node int) ([]int, error) {
	s, err := f.read(fmt.Sprintf("sys/devices/system/node/node%d/cpulist", node))
	if err != nil {
		return nil, err
	}
	return ParseCPUList(s)
}

// IfaceCPUs lists the CPUs of the NUMA node of interface name; nil when the
// interface reports no node (virtual devices, one-node machines).
func (f FS) IfaceCPUs(name string) []int {
	node := f.readInt("sys/class/net/"+name+"/device/numa_node", -1)
	if node < 0 {
		return nil
	}
	cpus, _ := f.NodeCPUs(node)
	return cpus
}
