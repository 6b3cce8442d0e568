package job

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wpg-dev/wpg/engine"
	"github.com/wpg-dev/wpg/internal/sys"
	"github.com/wpg-dev/wpg/pace"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
	"github.com/wpg-dev/wpg/template"
)

// linkRate resolves a rate given as a share of the link (--rate 50%) from
// the interface's speed (/sys/class/net/IFACE/speed); it adds a problem
// and returns false where the speed is unknown. note, when not empty, is
// for the report: the speed was a veth's nominal one.
func linkRate(p *problems, s Spec, r pace.Rate) (_ pace.Rate, note string, ok bool) {
	if !r.LinkShare() {
		return r, "", true
	}
	if s.Interface == "" {
		p.add("rate", s.Rate, "is a share of the link, and the run has no interface to take the speed from", "add {interface} IFACE, or give an absolute rate such as 1Gbps or 1Mpps")
		return r, "", false
	}
	var mbps int
	var nominal bool
	var err error
	if s.Netns != "" {
		if _, serr := os.Stat(netnsPath(s.Netns)); serr != nil {
			return r, "", false // checkNetns says so
		}
		mbps, nominal, err = linkSpeedIn(netnsPath(s.Netns), s.Interface)
	} else {
		mbps, nominal, err = linkSpeed(sysinfo.HostFS(), s.Interface)
	}
	if err != nil {
		p.add("rate", s.Rate, err.Error(), "give an absolute rate such as 1Gbps or 1Mpps")
		return r, "", false
	}
	if nominal {
		note = fmt.Sprintf("--rate %s is a share of %s's speed, %d Mb/s, which a veth reports as a nominal figure, not a link's: the rate is %s of it at layer 1; give an absolute rate (e.g. 1Gbps) to say what you mean", strings.TrimSpace(s.Rate), s.Interface, mbps, strings.TrimSpace(s.Rate))
	}
	return r.OfLink(float64(mbps) * 1e6), note, true
}

// linkSpeed reads the link speed of iface in Mb/s, with an error that says
// why it is unknown: no speed (lo, a link that is down: the kernel answers
// -1 or EINVAL). nominal is true for a veth, which reports a fixed 10000
// that is no link's.
func linkSpeed(fs sysinfo.FS, iface string) (mbps int, nominal bool, err error) {
	ifc, err := fs.Interface(iface)
	if err != nil {
		return 0, false, err
	}
	file := "/sys/class/net/" + iface + "/speed"
	if ifc.SpeedMbps == nil {
		raw, rerr := os.ReadFile(filepath.Join(fs.Root, file))
		what := strings.TrimSpace(string(raw))
		if rerr != nil {
			what = rerr.Error()
		}
		return 0, false, fmt.Errorf("interface %s reports no link speed (%s: %s; loopback, virtual devices and links that are down have none)", iface, file, what)
	}
	return *ifc.SpeedMbps, ifc.Virtual && ifc.Driver == "veth", nil
}

// linkSpeedIn is linkSpeed of iface in the network namespace at ns (a
// port's --netns), read with ethtool on a thread in that namespace
// (sys.EthtoolSpeed): /sys/class/net shows the links of the namespace
// that mounted it, the caller's, where iface may be another link of the
// same name or none.
func linkSpeedIn(ns, iface string) (mbps int, nominal bool, err error) {
	err = inNetns(ns, func() error {
		var e error
		if mbps, e = sys.EthtoolSpeed(iface); e != nil {
			return e
		}
		driver, _ := sys.EthtoolDriver(iface)
		nominal = driver == "veth"
		return nil
	})
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("interface %s in network namespace %s reports no link speed (%v; loopback and virtual devices without link settings have none)", iface, ns, err)
	case mbps < 0:
		return 0, false, fmt.Errorf("interface %s in network namespace %s reports no link speed (ethtool: unknown; links that are down, and virtual devices, have none)", iface, ns)
	}
	return mbps, nominal, nil
}

// timedPacer is the pacer configuration of a timed template (streams with
// their own rates, a capture's own timing): the engine makes each pacer
// follow its worker's source; FPS is the worker's share of the streams'
// mean rate (at least 1, so that the pacer keeps statistics).
func timedPacer(fps float64, workers int, s Spec, pr *prepared) pace.Config {
	w := float64(max(workers, 1))
	per := fps / w
	if !(per > 0) || math.IsInf(per, 0) {
		per = 1
	}
	return pace.Config{FPS: per, Wait: pr.wait, Clock: pr.clock, Priority: s.RTPriority, WakeBoost: pr.boost}
}

// streamCounts sums the workers' per-stream frame and byte counts for the
// report, and for a stream with its own schedule its frames' lateness
// (the largest of the workers', their mean weighted by their frames);
// the rates are the report's to set (report.Stream.SetRates).
func streamCounts(res *engine.Result, spec *template.Spec) []report.Stream {
	if spec == nil {
		return nil
	}
	var out []report.Stream
	for i := range spec.Streams {
		st := &spec.Streams[i]
		rs := report.Stream{Stream: i, Name: st.Name}
		counted := false
		var datagrams, late uint64
		var lateSum, lateMax int64
		for _, w := range res.Workers {
			if i < len(w.StreamFrames) {
				rs.Frames += w.StreamFrames[i]
				counted = true
			}
			if i < len(w.StreamBytes) {
				rs.Bytes += w.StreamBytes[i]
			}
			if i < len(w.StreamDatagrams) {
				datagrams += w.StreamDatagrams[i]
			}
			if i < len(w.StreamLateness) {
				l := w.StreamLateness[i]
				late, lateSum, lateMax = late+l.Frames, lateSum+l.SumNs, max(lateMax, l.MaxNs)
			}
		}
		if st.Timing != nil && late > 0 {
			mean := int64(math.Round(float64(lateSum) / float64(late)))
			rs.LatenessMaxNs, rs.LatenessMeanNs = &lateMax, &mean
		}
		if st.Fragmented() {
			rs.Datagrams = datagrams
		}
		if !counted {
			return nil
		}
		if t := st.Timing; t != nil {
			switch {
			case t.Original:
				rs.Rate = "original timing"
				if t.Speed != 1 {
					rs.Rate += fmt.Sprintf(" ×%g", t.Speed)
				}
			default:
				rs.Rate = t.Rate.String()
			}
			switch {
			case t.BurstFrames == 0:
			case t.Bursts == 1:
				rs.Mode = fmt.Sprintf("one burst of %d frames", t.BurstFrames)
			case t.Bursts == 0:
				rs.Mode = fmt.Sprintf("bursts of %d frames until the run stops, gap %v", t.BurstFrames, t.Gap)
			default:
				rs.Mode = fmt.Sprintf("%d bursts of %d frames, gap %v", t.Bursts, t.BurstFrames, t.Gap)
			}
			rs.DelayNs = t.Delay.Nanoseconds()
		}
		if st.Replay != nil {
			rs.Pcap = st.Replay.File
		}
		out = append(out, rs)
	}
	return out
}

// loadTemplate reads a template file (a variable for the test that
// counts the reads).
var loadTemplate = template.Load

// timedInput reports whether the run's frames keep their own schedule, so
// that the options of rate control apply without a --rate: --pcap without
// a rate (the capture's own timing), or a template whose streams have
// their own rates. A template that does not parse says no here; its error
// comes with the frames. It returns the template it parsed, for the
// frames to use rather than parse it again (65,535 streams take seconds).
func timedInput(s Spec) (bool, *template.Spec) {
	var spec *template.Spec
	var err error
	switch {
	case s.Pcap != "":
		return s.Rate == "", nil
	case s.Template != "" && s.TemplateText != "":
		return false, nil // an error of the frames'
	case s.Template != "":
		spec, err = loadTemplate(s.Template)
	case s.TemplateText != "":
		spec, err = template.Parse("template", []byte(s.TemplateText))
	default:
		return false, nil
	}
	if err != nil {
		return false, nil
	}
	return spec.Timed(), spec
}
