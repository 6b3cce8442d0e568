package sysinfo

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable writes e as a human-readable table.
func (e Env) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kernel\t%s\n", e.Kernel)
	fmt.Fprintf(tw, "cpu\t%s\n", orUnknown(e.CPUModel))
	fmt.Fprintf(tw, "cpus\t%d online, %d cores, allowed %s\n", e.CPUs, e.Cores, orUnknown(e.Allowed))
	fmt.Fprintf(tw, "numa nodes\t%d\n", e.NUMA)
	fmt.Fprintf(tw, "governor\t%s\n", orNone(e.Governor, "none (no cpufreq: VM or fixed frequency)"))
	fmt.Fprintf(tw, "tsc\tconstant_tsc=%s nonstop_tsc=%s\n", yesNo(e.ConstantTSC), yesNo(e.NonstopTSC))
	if e.PipeMaxSize != nil {
		fmt.Fprintf(tw, "pipe-max-size\t%s\n", bytesAnd(int64(*e.PipeMaxSize)))
	}
	if e.MemlockLimit != nil {
		if *e.MemlockLimit < 0 {
			fmt.Fprintf(tw, "memlock limit\tunlimited\n")
		} else {
			fmt.Fprintf(tw, "memlock limit\t%s\n", bytesAnd(*e.MemlockLimit))
		}
	}
	if i := e.Interface; i != nil {
		drv := i.Driver
		if i.Virtual {
			drv = orNone(drv, "virtual")
		}
		fmt.Fprintf(tw, "interface\t%s (%s), state %s\n", i.Name, orUnknown(drv), orUnknown(i.Operstate))
		speed := "unknown"
		if i.SpeedMbps != nil {
			speed = fmt.Sprintf("%d Mb/s", *i.SpeedMbps)
		}
		fmt.Fprintf(tw, "  speed, mtu\t%s, mtu %d, txqueuelen %d\n", speed, i.MTU, i.TxQueueLen)
		fmt.Fprintf(tw, "  queues\ttx %d, rx %d\n", i.TXQueues, i.RXQueues)
		if i.NUMANode < 0 {
			fmt.Fprintf(tw, "  numa node\tnone (a virtual device, or a machine of one node)\n")
		} else {
			fmt.Fprintf(tw, "  numa node\t%d\n", i.NUMANode)
		}
		fmt.Fprintf(tw, "  xps\t%s\n", masks(i.XPS))
		fmt.Fprintf(tw, "  rps\t%s\n", masks(i.RPS))
	}
	for _, wmsg := range e.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", wmsg)
	}
	_ = tw.Flush()
}

// bytesAnd writes a byte count with its binary size beside it when it
// has one ("8388608 bytes (8 MiB)").
func bytesAnd(n int64) string {
	s := fmt.Sprintf("%d bytes", n)
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.n {
			v := float64(n) / float64(u.n)
			if n%u.n == 0 {
				return fmt.Sprintf("%s (%d %s)", s, n/u.n, u.name)
			}
			return fmt.Sprintf("%s (%.1f %s)", s, v, u.name)
		}
	}
	return s
}

func orUnknown(s string) string { return orNone(s, "unknown") }

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// masks prints a queue → CPU mask map sorted by queue, or "not configured".
func masks(m map[string]string) string {
	if len(m) == 0 {
		return "not configured"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for n, k := range keys {
		parts[n] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}
