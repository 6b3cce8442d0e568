package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wpg-dev/wpg/dmabuf"
	"github.com/wpg-dev/wpg/units"
)

func init() { register(newDmabufCmd) }

func newDmabufCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dmabuf",
		Short: "DMA buffers: info (every u-dma-buf and mainline udmabuf device, sysfs attributes, limits) and bench (the check/clear workload under each cache mode)",
		Long: `dmabuf looks at the DMA buffers user space can map: ikwzm's u-dma-buf (/dev/udmabufN, its sysfs
directory under /sys/class/u-dma-buf, or /sys/class/udmabuf for the driver up to v1.4.8) and the
mainline /dev/udmabuf (CONFIG_UDMABUF: buffers made of sealed memfd pages). See docs/dmabuf.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var roots dmabuf.FS
	pf := cmd.PersistentFlags()
	pf.StringVar(&roots.Sys, "sys-root", "", "read sysfs below this directory instead of /sys (fixture trees)")
	pf.StringVar(&roots.Dev, "dev-root", "", "look for device nodes below this directory instead of /dev (fixture trees)")
	_ = pf.MarkHidden("sys-root")
	_ = pf.MarkHidden("dev-root")
	cmd.AddCommand(newDmabufInfoCmd(&roots), newDmabufBenchCmd(&roots))
	return cmd
}

func newDmabufInfoCmd(roots *dmabuf.FS) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info [DEVICE]",
		Short: "every DMA buffer device of both drivers with every sysfs attribute, the mainline module's limits and /dev/dma_heap",
		Long: `info lists every u-dma-buf device (both class names) with every attribute of its sysfs
directory (driver_version, size, phys_addr, sync_mode, sync_offset, sync_size, sync_direction,
sync_owner, dma_coherent, quirk_mmap_mode and ioctl_version where the driver has them), the mainline
/dev/udmabuf with its module parameters size_limit_mb and list_limit, and the DMA-buf heaps
(/dev/dma_heap/*). With DEVICE (/dev/udmabuf0, udmabuf0, /dev/udmabuf) only that one.`,
		Example: `  wpg dmabuf info
  wpg dmabuf info /dev/udmabuf0 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			markStarted(cmd)
			inv, err := roots.Inventory()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if inv, err = pickDevice(inv, args[0]); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, inv)
			}
			writeInventory(out, inv)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the inventory as JSON")
	return cmd
}

// pickDevice keeps only the device name (a node path or a name).
func pickDevice(inv dmabuf.Inventory, arg string) (dmabuf.Inventory, error) {
	name := filepath.Base(arg)
	for _, d := range inv.Devices {
		if d.Name == name {
			inv.Devices = []dmabuf.Device{d}
			inv.Mainline, inv.Heaps = dmabuf.Mainline{}, nil
			return inv, nil
		}
	}
	if name == dmabuf.MainlineNode {
		if !inv.Mainline.Present {
			return inv, fmt.Errorf("%s: %w: the kernel needs CONFIG_UDMABUF (=y, or =m and modprobe udmabuf)", inv.Mainline.Node, dmabuf.ErrNoDevice)
		}
		inv.Devices = nil
		return inv, nil
	}
	var have []string
	for _, d := range inv.Devices {
		have = append(have, d.Node)
	}
	if inv.Mainline.Present {
		have = append(have, inv.Mainline.Node)
	}
	list := "none"
	if len(have) > 0 {
		list = strings.Join(have, ", ")
	}
	return inv, fmt.Errorf("%s: %w (this machine has: %s): load ikwzm's u-dma-buf (modprobe u-dma-buf udmabuf0=SIZE) for /dev/udmabufN, or use the mainline /dev/udmabuf (CONFIG_UDMABUF)", arg, dmabuf.ErrNoDevice, list)
}

func writeInventory(w io.Writer, inv dmabuf.Inventory) {
	if len(inv.Devices) == 0 {
		fmt.Fprintln(w, "u-dma-buf: no devices (neither /sys/class/u-dma-buf nor /sys/class/udmabuf has any)")
	}
	for _, d := range inv.Devices {
		fmt.Fprintf(w, "%s  (%s, %s)\n", d.Node, d.Class, d.Dir)
		size := units.FormatSizeShort(int64(d.Size))
		line := fmt.Sprintf("  size %s (%d bytes)", size, d.Size)
		if d.PhysAddr != nil {
			line += fmt.Sprintf(", phys_addr %#x", *d.PhysAddr)
		}
		if d.SyncMode != nil {
			line += fmt.Sprintf(", sync_mode %d (with O_SYNC: %s)", *d.SyncMode, dmabuf.CacheMode(*d.SyncMode, true))
		}
		if d.DMACoherent != nil {
			line += fmt.Sprintf(", dma_coherent %v", *d.DMACoherent)
		}
		fmt.Fprintln(w, line)
		names := make([]string, 0, len(d.Attributes))
		for k := range d.Attributes {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(w, "    %-16s %s\n", k, d.Attributes[k])
		}
	}
	m := inv.Mainline
	if m.Node != "" {
		if m.Present {
			fmt.Fprintf(w, "mainline udmabuf: %s (%s)", m.Node, m.Mode)
		} else {
			fmt.Fprintf(w, "mainline udmabuf: %s absent (CONFIG_UDMABUF)", m.Node)
		}
		if m.SizeLimitMB != nil {
			fmt.Fprintf(w, ", size_limit_mb %d", *m.SizeLimitMB)
		}
		if m.ListLimit != nil {
			fmt.Fprintf(w, ", list_limit %d", *m.ListLimit)
		}
		fmt.Fprintln(w)
		var heaps []string
		for _, h := range inv.Heaps {
			heaps = append(heaps, h.Name+" ("+h.Node+")")
		}
		if len(heaps) == 0 {
			heaps = []string{"none"}
		}
		fmt.Fprintln(w, "DMA-buf heaps:", strings.Join(heaps, ", "))
	}
	for _, p := range inv.Problems {
		fmt.Fprintln(w, "problem:", p)
	}
}

func newDmabufBenchCmd(roots *dmabuf.FS) *cobra.Command {
	var (
		sizes, modes  string
		asJSON, noRef bool
	)
	cmd := &cobra.Command{
		Use:   "bench [DEVICE]",
		Short: "the u-dma-buf article's check_buf / clear_buf workload under each cache mode, with a memfd as the reference",
		Long: `bench times the workload of the u-dma-buf article: check_buf (a 0…255 ramp written into every
256-byte block and read back, 9 passes) and clear_buf (memset of the whole buffer, 99 passes), at
each of --sizes, under every cache mode DEVICE offers, and on a plain memfd mapping as the reference:

  u-dma-buf (/dev/udmabufN): without O_SYNC; with O_SYNC under each --sync-modes value (written to
    sync_mode before the open, restored after); cached with sync_for_cpu before and sync_for_device
    after each pass ("manual");
  mainline (/dev/udmabuf): cached without sync calls, and with DMA_BUF_IOCTL_SYNC START/END around
    each pass.

The table is the article's (program × O_SYNC × sync_mode × size, in seconds) with MB/s (10^6 bytes of
buffer per second over all passes) beside each time. Without DEVICE only the memfd reference runs.
Bytes check_buf reads back wrong are counted; any makes the command exit 3.`,
		Example: `  wpg dmabuf bench
  wpg dmabuf bench /dev/udmabuf0 --sync-modes 1,2
  wpg dmabuf bench /dev/udmabuf --sizes 1MiB,4MiB --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := dmabuf.BenchConfig{FS: *roots, NoReference: noRef}
			if len(args) == 1 {
				cfg.Device = args[0]
			} else if noRef {
				return fmt.Errorf("--no-reference leaves nothing to run without a DEVICE")
			}
			var err error
			cfg.Sizes, err = parseSizes(sizes, 1, 1<<30, func(item string, err error) error {
				return fmt.Errorf("--sizes %q: %w", item, err)
			})
			if err != nil {
				return err
			}
			cfg.SyncModes = []int{}
			for _, s := range strings.Split(modes, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				m, err := strconv.Atoi(s)
				if err != nil {
					return fmt.Errorf("--sync-modes %q: not a whole number: give sync_mode values 0 … 7, comma-separated, such as --sync-modes 1,2", s)
				}
				err = dmabuf.CheckSyncMode(m)
				if err != nil {
					return fmt.Errorf("--sync-modes %q: %w", s, err)
				}
				cfg.SyncModes = append(cfg.SyncModes, m)
			}
			if len(args) == 0 && cmd.Flags().Changed("sync-modes") {
				return fmt.Errorf("--sync-modes applies to a u-dma-buf DEVICE (/dev/udmabufN), and none is given: add the DEVICE, or drop --sync-modes (the memfd reference has no sync_mode)")
			}
			markStarted(cmd)
			rep, err := dmabuf.Bench(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				rep.WriteTable(out)
			}
			if n := rep.Errors(); n > 0 {
				return &ExitError{Code: ExitCheckFailed, Err: fmt.Errorf("check_buf read back %d bytes wrong: the buffer does not hold what the CPU wrote", n)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sizes, "sizes", "1MiB,5MiB,10MiB", "buffer sizes, comma-separated (1 byte … 1GiB; KiB = 1024 bytes, KB = 1000)")
	fl.StringVar(&modes, "sync-modes", "0,1,2,3", "u-dma-buf: the sync_mode values timed with O_SYNC, comma-separated (0-7)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&noRef, "no-reference", false, "leave out the memfd reference")
	return cmd
}
