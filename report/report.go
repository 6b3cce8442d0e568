// Package report holds the final report of a wpg run: the human table, the
// versioned JSON document described in docs/report.md, and the live progress
// line drawn on a terminal.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/header"
	"github.com/wpg-dev/wpg/pace"
)

// Schema is the version of the JSON report. It changes when a field is
// renamed or removed or changes meaning; new fields may be added within a
// version. v2 (issue #25) carries what an exact merge of reports needs
// (lateness_histogram, the verification's latency_histogram, started,
// job) and what a merge writes (segment, inputs[], workers[].segment);
// every v1 field keeps its meaning.
const Schema = "wpg.report/v2"

// Report is the outcome of `wpg send` or `wpg bench`.
type Report struct {
	Schema  string `json:"schema"`
	Command string `json:"command"`
	// Template is the template file, or "(embedded default)".
	Template string `json:"template,omitempty"`
	// Job is the run's job identity (job.Identity: "wpg-" and 16 hex
	// digits), shared by the segments of one job and by nothing else;
	// wpg report merge merges the reports of one job only.
	Job string `json:"job,omitempty"`
	// Segment is the run's segment of its job, "I/N" (wpg send
	// --segment); absent for the whole job.
	Segment string `json:"segment,omitempty"`
	// Started is when the workers were released to send, where Seconds
	// begins (RFC 3339 with nanoseconds): a merge of reports takes its
	// rates over the union of their time spans.
	Started string       `json:"started,omitempty"`
	Backend backend.Info `json:"backend"`
	// Plan is how frames were produced ("prerender", "stream", or a mix).
	Plan       string `json:"plan"`
	PlanDetail string `json:"plan_detail,omitempty"`
	Batch      int    `json:"batch"`

	Frames  uint64  `json:"frames"`
	Bytes   uint64  `json:"bytes"`
	Seconds float64 `json:"seconds"`
	PPS     float64 `json:"pps"`
	// BPS is the bit rate at layer BPSLayer: "l2" counts frame bytes × 8
	// (no preamble, IFG or FCS), "l1" (--rate-layer l1) adds
	// pace.L1Overhead bytes per frame.
	BPS      float64 `json:"bps"`
	BPSLayer string  `json:"bps_layer"`
	// FrameSize is the mean frame length in bytes.
	FrameSize float64 `json:"frame_size"`
	// Payload is true for the payload frames of local and device paths
	// (pipe, shm, …: backend.Registration.Payload). Their users read
	// bytes per second of payload, not bit rates: PayloadBytes is the
	// frame bytes less the wpg header of each frame (none with --raw),
	// PayloadBytesPerSecond their rate; the table shows that in place of
	// the bit rate. BPS keeps its meaning for them.
	Payload               bool    `json:"payload,omitempty"`
	PayloadBytes          uint64  `json:"payload_bytes,omitempty"`
	PayloadBytesPerSecond float64 `json:"payload_bytes_per_second,omitempty"`

	// Rate is the --rate given ("" = flat out); TargetPPS its frame rate.
	Rate          string  `json:"rate,omitempty"`
	TargetPPS     float64 `json:"target_pps"`
	AchievedRatio float64 `json:"achieved_ratio"`
	Wait          string  `json:"wait,omitempty"`
	// WakeBoost says whether the hybrid wait slept under SCHED_FIFO
	// (pace.Config.WakeBoost), how often, or why not.
	WakeBoost string `json:"wake_boost,omitempty"`
	Clock     string `json:"clock"`
	TSC       bool   `json:"tsc"`
	// Lateness of pacer grants versus their deadlines (ns); zero when
	// flat out. LatenessP50Ns and LatenessP99Ns are its median and 99th
	// percentile: the JSON also writes them under their wpg.report/v1
	// names, p50_jitter and p99_jitter (deprecated: they go in v3; jitter
	// is the receiver's RFC 3550 figure, verification.jitter_ns), and
	// reads them from a report that has only those.
	LatenessMaxNs  int64 `json:"lateness_max_ns"`
	LatenessMeanNs int64 `json:"lateness_mean_ns"`
	LatenessP50Ns  int64 `json:"lateness_p50_ns"`
	LatenessP99Ns  int64 `json:"lateness_p99_ns"`
	// LatenessHistogram is the histogram behind the lateness figures
	// (internal/hist's JSON: bounds and the non-zero buckets, 3
	// significant digits), so that reports merge exactly (wpg report
	// merge); absent flat out.
	LatenessHistogram json.RawMessage `json:"lateness_histogram,omitempty"`
	// ScheduleLagMaxNs is the furthest the senders fell behind their
	// schedule (ns): the oldest unsent frame's overdue time at its worst.
	ScheduleLagMaxNs int64 `json:"schedule_lag_max_ns,omitempty"`

	// Stop says why the run ended: count, source, duration, signal, error.
	Stop  string `json:"stop"`
	Error string `json:"error,omitempty"`

	Workers []Worker `json:"workers"`
	// Streams are the frames sent of each stream of a packet template
	// (summed over the workers), with the stream's own rate and burst
	// shape where it has them; absent for payload frames.
	Streams []Stream `json:"streams,omitempty"`
	// Verify is the payload verification mode of a local or device path
	// ("on", "sample", "off"); empty for network paths.
	Verify string `json:"verify,omitempty"`
	// Verification is the receiver's report when a receiving process took
	// part (local paths), verbatim; a port pair's receiving port's (both
	// ports' merged with --bidir).
	Verification json.RawMessage `json:"verification,omitempty"`
	// Ports are a port pair's ports (or a port with an address): where
	// they are, their addresses and the gateways resolved.
	Ports []Port `json:"ports,omitempty"`
	// Directions are a port pair's directions, each with its own
	// counters, rate, receiver and verdict: A→B, and B→A with --bidir.
	// The report's totals add them up.
	Directions []Direction `json:"directions,omitempty"`
	// CPUSeconds is the CPU time of all worker threads.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Environment describes the machine (see wpg sysinfo).
	Environment any `json:"environment,omitempty"`
	// Notes are plain-language remarks (fallbacks, a path that could not keep up).
	Notes []string `json:"notes,omitempty"`
	// Provenance says which wpg ran, how, when and where (the client
	// fills it).
	Provenance *Provenance `json:"provenance,omitempty"`
	// Intervals are the run's periods (--interval), summing to the totals.
	Intervals []Interval `json:"intervals,omitempty"`
	// Repeats summarises bench --repeat: the report is the last run's,
	// Repeats the median and range of all.
	Repeats *Repeats `json:"repeats,omitempty"`
	// Inputs are, for a report wpg report merge made (Merge), the
	// reports it merged: each one's segment, totals, backend, environment
	// and provenance.
	Inputs []Input `json:"inputs,omitempty"`

	// Failed is the check the run asked for that failed (the receiver's
	// verification, the fail-under rate check), nil when every check
	// passed. Its message is also the last note; it is not part of the
	// JSON document.
	Failed *CheckFailure `json:"-"`
}

// Checks a run can fail (CheckFailure.Check).
const (
	// CheckVerification: the run's receivers saw frames lost, duplicated,
	// corrupted or missing.
	CheckVerification = "verification"
	// CheckRate: the achieved rate fell under the fail-under share of the
	// target.
	CheckRate = "rate"
)

// CheckFailure is a failed check of a finished run: the CLI's exit code 3.
type CheckFailure struct {
	// Check is CheckVerification or CheckRate.
	Check string
	// Message says what failed, in plain words.
	Message string
}

func (c *CheckFailure) Error() string { return c.Message }

// CheckReceived judges a receiver's report v (wpg.recv/v1; none: nil)
// against the sent frames the receiver was to see: a failed
// CheckVerification when it counted frames lost, duplicated, corrupted
// or missing, or when frames sent never arrived (lost at the very end,
// where no gap shows); nil when it passes.
func CheckReceived(v json.RawMessage, sent uint64) *CheckFailure {
	if len(v) == 0 {
		return nil
	}
	var r struct {
		Frames                               *uint64
		Lost, Duplicated, Corrupted, Missing uint64
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return &CheckFailure{Check: CheckVerification, Message: "verification failed: the receiver's report is unreadable: " + err.Error()}
	}
	var bad []string
	for _, c := range []struct {
		n    uint64
		what string
	}{{r.Lost, "lost"}, {r.Duplicated, "duplicated"}, {r.Corrupted, "corrupted"}, {r.Missing, "missing"}} {
		if c.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	// Frames lost at the very end leave no gap to count: what the
	// sender sent and the receiver neither saw nor counted lost.
	if r.Frames != nil {
		seen := int64(*r.Frames) - int64(r.Duplicated) + int64(r.Lost)
		if tail := int64(sent) - seen; tail > 0 && r.Missing == 0 {
			bad = append(bad, fmt.Sprintf("%d of %d sent frames never arrived", tail, sent))
		}
	}
	if len(bad) > 0 {
		return &CheckFailure{Check: CheckVerification, Message: "verification failed: the receiver reports " + strings.Join(bad, ", ")}
	}
	return nil
}

// Stream is one template stream's share of the run (issue #15; its
// bytes, rates and lateness: issue #29).
type Stream struct {
	Stream int    `json:"stream"`
	Name   string `json:"name"`
	Frames uint64 `json:"frames"`
	// Bytes are the bytes of those frames, whole, as the report's Bytes.
	Bytes uint64 `json:"bytes"`
	// PPS and BPS are the stream's frames and bits (at the report's
	// BPSLayer) over the run's Seconds: its part of the run's rates,
	// which the streams' add up to.
	PPS float64 `json:"pps"`
	BPS float64 `json:"bps"`
	// Datagrams is, for a stream of IP fragments, the whole datagrams
	// among Frames (what a receiver counts: the signature is in the
	// last fragment); 0 for streams that are not fragmented.
	Datagrams uint64 `json:"datagrams,omitempty"`
	// Rate is the stream's own rate ("" when it shares the run's --rate),
	// or "original timing" for a capture replayed with its own gaps.
	Rate string `json:"rate,omitempty"`
	// Mode describes a burst shape ("" = continuous).
	Mode    string `json:"mode,omitempty"`
	DelayNs int64  `json:"delay_ns,omitempty"`
	// Pcap is the capture the stream replays.
	Pcap string `json:"pcap,omitempty"`
	// LatenessMaxNs and LatenessMeanNs are, for a stream with its own
	// schedule (Rate set), how late its frames went against their own due
	// times (ns; each frame's, where the report's lateness is the
	// grants'); absent for a stream that shares the run's --rate, which
	// the run's lateness is about (the pacer paces the run's frames,
	// whatever their stream).
	LatenessMaxNs  *int64 `json:"lateness_max_ns,omitempty"`
	LatenessMeanNs *int64 `json:"lateness_mean_ns,omitempty"`
}

// SetRates sets the stream's rates from its frames and bytes over seconds,
// the bits at layer (a report's BPSLayer: "l2", "l1").
func (st *Stream) SetRates(seconds float64, layer string) {
	st.PPS, st.BPS = 0, 0
	if seconds > 0 {
		st.PPS = float64(st.Frames) / seconds
		st.BPS = layerOf(layer).Bits(st.Bytes, st.Frames) / seconds
	}
}

// layerOf is a report's layer by its name (BPSLayer); L2 for none.
func layerOf(name string) pace.Layer {
	l, _ := pace.ParseLayer(name)
	return l
}

// Port is one port of a run that sends or receives on network ports
// with addresses (wpg send --src-ip, --rx-interface).
type Port struct {
	// Role is "tx" (the sending port, A) or "rx" (the receiving one, B).
	Role      string `json:"role"`
	Interface string `json:"interface"`
	Netns     string `json:"netns,omitempty"`
	// MAC is the port's own; Address its address with the link's prefix.
	MAC     string `json:"mac,omitempty"`
	Address string `json:"address,omitempty"`
	// Gateway is its next hop and GatewayMAC what ARP or Neighbor
	// Discovery found for it before the run.
	Gateway    string `json:"gateway,omitempty"`
	GatewayMAC string `json:"gateway_mac,omitempty"`
	// Answered counts the requests for the port's address wpg answered
	// while the run lasted (none when the kernel holds the address and
	// answers itself: Kernel).
	Answered uint64 `json:"answered"`
	Kernel   bool   `json:"kernel_answers,omitempty"`
	// VLANTags are the VLAN tags, outer first, of the frames that leave
	// the port, those its agent asked for the gateway and answered with
	// (none: untagged).
	VLANTags []VLANTag `json:"vlan_tags,omitempty"`
	// Segment is, in a merged report, the segment (or the report) the
	// port was in.
	Segment string `json:"segment,omitempty"`
}

// VLANTag is one VLAN tag of a port: its TPID in hex ("0x8100" for
// 802.1Q, "0x88a8" for an 802.1ad service tag) and its VLAN id.
type VLANTag struct {
	TPID string `json:"tpid"`
	ID   uint16 `json:"id"`
}

// NewVLANTag is the tag of TPID tpid and VLAN id id.
func NewVLANTag(tpid, id uint16) VLANTag {
	return VLANTag{TPID: fmt.Sprintf("0x%04x", tpid), ID: id}
}

// String writes the tag as wpg's messages do (header.FormatVLANTag:
// "802.1Q 100"), or "TPID ID" when its TPID is no hex number.
func (t VLANTag) String() string {
	tpid, err := strconv.ParseUint(t.TPID, 0, 16)
	if err != nil {
		return t.TPID + " " + strconv.Itoa(int(t.ID))
	}
	return header.FormatVLANTag(uint16(tpid), t.ID)
}

// Direction is one direction of a port pair: what its sending port sent
// and its receiving port received.
type Direction struct {
	// Direction is "A→B" or "B→A"; From and To the sending and receiving
	// interfaces.
	Direction string `json:"direction"`
	From      string `json:"from"`
	To        string `json:"to"`
	// Frames … AchievedRatio are the sender's, as the report's own.
	Frames        uint64  `json:"frames"`
	Bytes         uint64  `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	PPS           float64 `json:"pps"`
	BPS           float64 `json:"bps"`
	TargetPPS     float64 `json:"target_pps"`
	AchievedRatio float64 `json:"achieved_ratio"`
	// Verification is the receiving port's receiver report (wpg.recv/v1).
	Verification json.RawMessage `json:"verification,omitempty"`
	// Verdict is "pass", or what failed (the same words as a failed
	// check: frames lost, duplicated, corrupted, on the wrong stream).
	Verdict string `json:"verdict"`
}

// Worker is one worker's share of the run.
type Worker struct {
	Worker     int     `json:"worker"`
	CPU        int     `json:"cpu"`
	NUMANode   int     `json:"numa_node"`
	Frames     uint64  `json:"frames"`
	Bytes      uint64  `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	PPS        float64 `json:"pps"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Mode       string  `json:"mode,omitempty"`
	Error      string  `json:"error,omitempty"`
	// Segment is, in a merged report, the segment (or the report) the
	// worker ran in.
	Segment string `json:"segment,omitempty"`
	// Verification is this worker's receiver report (local paths start one
	// receiver per worker).
	Verification json.RawMessage `json:"verification,omitempty"`
}

// reportJSON is Report without its JSON methods.
type reportJSON Report

// deprecatedJSON are the report's fields that a later schema drops, under
// their old names.
type deprecatedJSON struct {
	// P50Jitter and P99Jitter are LatenessP50Ns and LatenessP99Ns (v1's
	// names for the pacer's lateness, which is no jitter).
	P50Jitter *int64 `json:"p50_jitter,omitempty"`
	P99Jitter *int64 `json:"p99_jitter,omitempty"`
}

// MarshalJSON writes the report's fields, then its deprecated ones
// (p50_jitter, p99_jitter) with the values of their new names.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		reportJSON
		deprecatedJSON
	}{reportJSON(r), deprecatedJSON{&r.LatenessP50Ns, &r.LatenessP99Ns}})
}

// UnmarshalJSON reads a report of any version: from one that has only
// the deprecated names of a field (v1, or an older v2), the field takes
// their values.
func (r *Report) UnmarshalJSON(b []byte) error {
	var old deprecatedJSON
	var names map[string]json.RawMessage
	if err := json.Unmarshal(b, &struct {
		*reportJSON
		*deprecatedJSON
	}{(*reportJSON)(r), &old}); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // a field by its JSON path, not by the embedding
			te.Field = strings.TrimPrefix(strings.TrimPrefix(te.Field, "reportJSON."), "deprecatedJSON.")
		}
		return err
	}
	if old.P50Jitter == nil && old.P99Jitter == nil {
		return nil
	}
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	if _, ok := names["lateness_p50_ns"]; !ok && old.P50Jitter != nil {
		r.LatenessP50Ns = *old.P50Jitter
	}
	if _, ok := names["lateness_p99_ns"]; !ok && old.P99Jitter != nil {
		r.LatenessP99Ns = *old.P99Jitter
	}
	return nil
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
