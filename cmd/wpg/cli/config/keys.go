package config

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/internal/suggest"
	"github.com/wpg-dev/wpg/nexthop"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/sysinfo"
)

// Key describes one configuration key.
type Key struct {
	Name    string // dotted name, e.g. "tx.ring_bytes"
	Flag    string // the command-line flag that overrides it, if any
	Size    bool   // a byte size: integer or string with unit ("16MiB")
	Min     int64
	Help    string
	Default int64
	field   func(*Config) *int64
	// Text is true for a key that holds a string (Path: a file path);
	// its default is DefaultText and GetText reads it.
	Text        bool
	Path        bool
	DefaultText string
	text        func(*Config) *string
	// Check, when set, checks a text key's value (the error says why it
	// is refused and what to write).
	Check func(string) error
}

// Keys lists every key, in the order `wpg config` prints them.
var Keys = []Key{
	{Name: "tx.prerender_max_bytes", Flag: "--prerender-max-bytes", Size: true, Min: 0, Default: 256 << 20,
		Help: "largest total size of frames pre-rendered before sending (--plan auto)", field: func(c *Config) *int64 { return &c.TX.PrerenderMaxBytes }},
	{Name: "tx.prerender_max_packets", Flag: "--prerender-max-packets", Min: 0, Default: 100_000_000,
		Help: "largest number of frames pre-rendered before sending (--plan auto)", field: func(c *Config) *int64 { return &c.TX.PrerenderMaxPackets }},
	{Name: "tx.ring_bytes", Flag: "--ring-bytes", Size: true, Min: 4096, Default: 16 << 20,
		Help: "cap on one worker's AF_PACKET TX ring / AF_XDP UMEM (locked memory)", field: func(c *Config) *int64 { return &c.TX.RingBytes }},
	{Name: "server.preview_max", Min: 1, Default: 256,
		Help: "most frames one preview may generate", field: func(c *Config) *int64 { return &c.Server.PreviewMax }},
	{Name: "server.job_history", Min: 0, Default: 100,
		Help: "finished jobs shown on the jobs page", field: func(c *Config) *int64 { return &c.Server.JobHistory }},
	{Name: "server.job_history_db", Min: 0, Default: 1000,
		Help: "finished jobs kept in the job database", field: func(c *Config) *int64 { return &c.Server.JobHistoryDB }},
	{Name: "server.listen", Flag: "--listen", Text: true, DefaultText: "127.0.0.1:8080",
		Help: "address wpg serve listens on (host:port)", text: func(c *Config) *string { return &c.Server.Listen }},
	{Name: "server.db", Flag: "--db", Text: true, Path: true,
		Help: "job database of wpg serve (\"\": $XDG_STATE_HOME/wpg/jobs.db)", text: func(c *Config) *string { return &c.Server.DB }},
	{Name: "server.token_file", Flag: "--token-file", Text: true, Path: true,
		Help: "file holding the API token of wpg serve (\"\": none)", text: func(c *Config) *string { return &c.Server.TokenFile }},
	{Name: "server.job_files", Flag: "--job-files", Text: true, Path: true,
		Help: "directory every file of a wpg serve job must lie in (\"\": anywhere)", text: func(c *Config) *string { return &c.Server.JobFiles }},
	{Name: "server.max_jobs", Flag: "--max-jobs", Min: 1, Default: 32,
		Help: "most jobs wpg serve runs at once (more: 429)", field: func(c *Config) *int64 { return &c.Server.MaxJobs }},
	{Name: "server.max_parses", Flag: "--max-parses", Min: 1, Default: 2,
		Help: "most templates wpg serve parses at once: previews, job checks and starts (more: 429)", field: func(c *Config) *int64 { return &c.Server.MaxParses }},
	{Name: "dpdk.eal_args", Flag: "--dpdk-args", Text: true,
		Help: "EAL arguments of the dpdk backend, e.g. \"--no-huge -m 512 --no-pci --vdev net_null0\" (builds with -tags dpdk)", text: func(c *Config) *string { return &c.DPDK.EALArgs }},
	{Name: "port.src_ip", Flag: "--src-ip", Text: true, Check: checkPortAddr,
		Help: "the sending port's address with its link's prefix, e.g. \"198.18.0.1/24\" (send; the template's ports: and the flag go first)", text: func(c *Config) *string { return &c.Port.SrcIP }},
	{Name: "port.gateway", Flag: "--gateway", Text: true, Check: checkGateway,
		Help: "the sending port's next hop, resolved by ARP or Neighbor Discovery, e.g. \"198.18.0.254\"", text: func(c *Config) *string { return &c.Port.Gateway }},
	{Name: "port.rx_src_ip", Flag: "--rx-src-ip", Text: true, Check: checkPortAddr,
		Help: "the receiving port's address with its link's prefix (send --rx-interface)", text: func(c *Config) *string { return &c.Port.RxSrcIP }},
	{Name: "port.rx_gateway", Flag: "--rx-gateway", Text: true, Check: checkGateway,
		Help: "the receiving port's next hop (send --bidir sends from that port through it)", text: func(c *Config) *string { return &c.Port.RxGateway }},
	{Name: "send.interface", Flag: "--interface", Text: true,
		Help: "the interface wpg send sends on without -i (backends that send on one; with it the default backend is afpacket)", text: func(c *Config) *string { return &c.Send.Interface }},
	{Name: "send.backend", Flag: "--backend", Text: true, Check: checkBackend,
		Help: "the data path of wpg send without --backend (\"\": afpacket with an interface, else null)", text: func(c *Config) *string { return &c.Send.Backend }},
	{Name: "send.rate", Flag: "--rate", Text: true, Check: checkRate,
		Help: "the target rate of wpg send without --rate, as --rate reads it (\"\": flat out; not for a template whose streams keep their own rates, or --pcap)", text: func(c *Config) *string { return &c.Send.Rate }},
	{Name: "send.workers", Flag: "--workers", Min: 1, Default: 1,
		Help: "sender workers of wpg send without --workers", field: func(c *Config) *int64 { return &c.Send.Workers }},
	{Name: "send.pin_cores", Flag: "--pin-cores", Text: true, Check: checkCores,
		Help: "pin wpg send's worker i to the i-th CPU of this list without --pin-core, --pin-cores or --auto-pin (e.g. \"2,3\")", text: func(c *Config) *string { return &c.Send.PinCores }},
	{Name: "recv.interface", Flag: "--interface", Text: true,
		Help: "the interface wpg recv captures on without -i (with it the default backend is afpacket)", text: func(c *Config) *string { return &c.Recv.Interface }},
}

// checkBackend refuses a backend name wpg does not know.
func checkBackend(s string) error {
	known := backend.Known()
	if s == "" || slices.Contains(known, s) {
		return nil
	}
	msg := fmt.Sprintf("%q is not a backend: give one of %s", s, strings.Join(known, ", "))
	if near := suggest.Closest(s, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return errors.New(msg)
}

// checkRate reads a rate as --rate does (docs/rate.md).
func checkRate(s string) error {
	_, err := pace.ParseRate(s)
	return err
}

// checkPortAddr reads a port's address with its link's prefix as
// --src-ip does; whether a gateway fits it is checked where both are
// known (the run).
func checkPortAddr(s string) error {
	if s == "" {
		return nil
	}
	if _, err := nexthop.ParsePort(s, ""); err != nil {
		if pe, ok := err.(*nexthop.PortError); ok {
			return fmt.Errorf("%q %s; %s", s, pe.Why, pe.Remedy)
		}
		return err
	}
	return nil
}

// checkGateway reads a next hop's address as --gateway does.
func checkGateway(s string) error {
	if s == "" {
		return nil
	}
	if _, err := netip.ParseAddr(strings.TrimSpace(s)); err != nil {
		return fmt.Errorf("%q is not an IP address; give the device's address on the port's link, e.g. 198.18.0.254", s)
	}
	return nil
}

// checkCores reads a CPU list as --pin-cores does.
func checkCores(s string) error {
	if s == "" {
		return nil
	}
	if _, err := sysinfo.ParseCPUList(s); err != nil {
		return fmt.Errorf("%q is not a CPU list: %v: write CPUs and ranges, e.g. \"2,3\" or \"2-5\"", s, err)
	}
	return nil
}

func textExample(k Key) string {
	switch {
	case k.DefaultText != "":
		return k.DefaultText
	case k.Path:
		return "/var/lib/wpg/" + k.Name[strings.LastIndex(k.Name, ".")+1:]
	}
	return "text"
}

func keyNames() []string {
	var out []string
	for _, k := range Keys {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}
