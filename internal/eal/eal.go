// Package eal reads DPDK EAL command-line arguments (DPDK 22.11's
// options, as `dpdk-testpmd --help` lists them): which options take a
// value, and which of those values name a file or directory of the
// host, so that a caller that confines the files of a job (wpg serve
// --job-files) finds every path the EAL would open, create or load, and
// refuses what it cannot check. It only parses: it opens nothing and
// needs no privileges.
package eal

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Path is a value of an EAL argument that names a file or a directory.
type Path struct {
	// Option is the option ("--vdev", "--trace-dir", "-a"); Device and
	// Key are, for a device's arguments (--vdev, -a), the device
	// ("net_pcap0") and the key ("tx_pcap"); "" for an option's own
	// value.
	Option, Device, Key string
	// Path is the file as given.
	Path string
}

// Error is an EAL argument Confine refuses.
type Error struct {
	// Arg is the argument as given (with its value, when that is the
	// next argument).
	Arg string
	// Reason says what is wrong with it, Fix what to give instead.
	Reason, Fix string
}

func (e *Error) Error() string { return fmt.Sprintf("EAL argument %q %s: %s", e.Arg, e.Reason, e.Fix) }

// The options of DPDK 22.11's EAL that Confine lets through, by what
// they take. getopt_long also takes an unambiguous abbreviation of a
// long option (--trace-d for --trace-dir) and clusters short ones
// (-vd LIB): Confine knows neither, so that nothing reaches the EAL
// under a name it did not check.
var (
	// flags take no value.
	flags = set("--in-memory", "--no-huge", "--no-pci", "--no-hpet", "--no-shconf", "--no-telemetry", "--telemetry",
		"--legacy-mem", "--single-file-segments", "--match-allocations", "--vmware-tsc-map", "-v")
	// values take one that names no file.
	values = set("-c", "-l", "--lcores", "-s", "-S", "--main-lcore", "--mbuf-pool-ops-name", "-n", "-m", "-r",
		"-b", "--block", "--iova-mode", "--proc-type", "--syslog", "--log-level", "--trace", "--trace-bufsz",
		"--trace-mode", "--base-virtaddr", "--force-max-simd-bitwidth", "--socket-mem", "--socket-limit",
		"--vfio-intr", "--vfio-vf-token")
	// optional take a value only after "=".
	optional = set("--huge-unlink", "--huge-worker-stack")
	// dirs take a directory: the EAL writes its trace files there, or
	// its hugepage files.
	dirs = set("--trace-dir", "--huge-dir")
	// devices take a device and its arguments (NAME,KEY=VALUE,…).
	devices = set("--vdev", "-a", "--allow")
)

// fileKeys are the device arguments that name a file of the host:
// net_pcap's captures, virtio_user's and memif's sockets, af_xdp's
// program and socket. Any other argument whose value has a "/" in it is
// taken for a file too.
var fileKeys = set("rx_pcap", "tx_pcap", "path", "socket", "xdp_prog", "uds_path")

// prefix is what --file-prefix may be: a name, which the EAL puts in its
// runtime directory (/var/run/dpdk/NAME) and its hugepage files.
var prefix = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Confine returns args with every value that names a file or directory
// replaced by what confine makes of it (an absolute path in the
// caller's directory; a refusal as an *Error, whose Arg Confine fills),
// and refuses (an *Error) what it cannot check: an option it does not
// know (it lists the ones it takes), -d (a shared object the EAL loads
// and runs in the process), a --file-prefix that is not a plain name,
// and a bare word. args itself is not changed.
func Confine(args []string, confine func(Path) (string, *Error)) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, val, eq := a, "", false
		switch {
		case strings.HasPrefix(a, "--"):
			opt, val, eq = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-") && len(a) > 2:
			opt, val, eq = a[:2], a[2:], true // -l0-1
		}
		given := a // the argument as the user wrote it, for errors
		switch {
		case flags[opt] && !eq:
			out = append(out, a)
			continue
		case optional[opt]:
			out = append(out, a)
			continue
		case values[opt] || dirs[opt] || devices[opt] || opt == "--file-prefix":
		case opt == "-d":
			return nil, &Error{Arg: a, Reason: "loads a shared object (a driver) into the process, which runs its code",
				Fix: "drop it: a server that confines its jobs' files loads no driver a job names (the EAL's own drivers need no -d)"}
		case !strings.HasPrefix(a, "-"):
			return nil, &Error{Arg: a, Reason: "is no EAL option (each option starts with -)", Fix: "give EAL options only, e.g. --no-huge -m 512 --vdev net_null0"}
		default:
			return nil, &Error{Arg: a, Reason: "is not an EAL option that the check of a confined server knows to name no file other than the ones it confines",
				Fix: "give only " + Known() + " (whole names: no abbreviations, no short options run together)"}
		}
		if !eq {
			if i+1 == len(args) {
				out = append(out, a) // the EAL says a value is missing
				continue
			}
			i++
			val = args[i]
			given = a + " " + val
		}
		v, err := confineValue(opt, val, confine)
		if err != nil {
			err.Arg = given
			return nil, err
		}
		if eq {
			out = append(out, strings.TrimSuffix(a, val)+v)
		} else {
			out = append(out, a, v)
		}
	}
	return out, nil
}

// confineValue is the value val of option opt with its files confined.
func confineValue(opt, val string, confine func(Path) (string, *Error)) (string, *Error) {
	switch {
	case opt == "--file-prefix":
		if !prefix.MatchString(val) {
			return "", &Error{Reason: "is no plain name: the EAL makes its runtime directory and hugepage files from it",
				Fix: "give a name of letters, digits, _, . and - (e.g. --file-prefix wpg1), or --in-memory"}
		}
	case dirs[opt]:
		return confine(Path{Option: opt, Path: val})
	case devices[opt]:
		dev, kvs, ok := strings.Cut(val, ",")
		if !ok {
			return val, nil
		}
		parts := strings.Split(kvs, ",")
		for j, kv := range parts {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !(fileKeys[k] || strings.ContainsRune(v, '/') || (k == "iface" && vhost(dev))) {
				continue
			}
			p, err := confine(Path{Option: opt, Device: dev, Key: k, Path: v})
			if err != nil {
				return "", err
			}
			parts[j] = k + "=" + p
		}
		return dev + "," + strings.Join(parts, ","), nil
	}
	return val, nil
}

// vhost reports whether dev is a vhost-user device, whose iface is its
// socket's path.
func vhost(dev string) bool {
	return strings.HasPrefix(dev, "net_vhost") || strings.HasPrefix(dev, "eth_vhost")
}

// Known lists the options Confine takes.
func Known() string {
	var all []string
	for _, m := range []map[string]bool{flags, values, optional, dirs, devices} {
		for k := range m {
			all = append(all, k)
		}
	}
	all = append(all, "--file-prefix")
	slices.Sort(all)
	return strings.Join(all, ", ")
}
