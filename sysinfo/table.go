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
		fmt.Fprintf(tw, "pipe-max-size\t%d\n", *e.PipeMaxSize)
	}
	if e.MemlockLimit != nil {
		if *e.MemlockLimit < 0 {
			fmt.Fprintf(tw, "memlock limit\tunlimited\n")
		} else {
			fmt.Fprintf(tw, "memlock limit\t%d bytes\n", *e.MemlockLimit)
		}
	}
	if i := e.Interface; i != nil {
		drv := i.Driver
		if i.Virtual {
			drv = orNone(drv, "virtual")
		}
		fmt.Fprintf(tw, "interface\t%s (%s), %s\n", i.Name, orUnknown(drv), orUnknown(i.Operstate))
		speed := "unknown"
		if i.SpeedMbps != nil {
			speed = fmt.Sprintf("%d Mb/s", *i.SpeedMbps)
		}
		fmt.Fprintf(tw, "  speed, mtu\t%s, mtu %d, txqueuelen %d\n", speed, i.MTU, i.TxQueueLen)
		fmt.Fprintf(tw, "  queues\ttx %d, rx %d\n", i.TXQueues, i.RXQueues)
		fmt.Fprintf(tw, "  numa node\t%d\n", i.NUMANode)
		if len(i.XPS) > 0 {
			keys := make([]string, 0, len(i.XPS))
			for k := range i.XPS {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, k+"="+i.XPS[k])
			}
			fmt.Fprintf(tw, "  xps\t%s\n", strings.Join(parts, " "))
		} else {
			fmt.Fprintf(tw, "  xps\tnot configured\n")
		}
	}
	for _, wmsg := range e.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", wmsg)
	}
	_ = tw.Flush()
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
