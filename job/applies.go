package job

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/wpg-dev/wpg/backend"
	"github.com/wpg-dev/wpg/pace"
)

// One rule for options that do nothing in the run asked for: a field given
// (not zero) where it does not apply is an OptionError that says where it
// applies. Defaults never trip it.
//
// Backend-specific options apply to the backends whose
// Registration.Options name them (by field name, backend.SpecificOptions);
// the classes below apply to a kind of run.
var (
	// payloadFields shape payload frames (local and device paths).
	payloadFields = []string{"raw", "fill", "payload_file", "seed", "verify"}
	// packetFields shape how packet templates are rendered.
	packetFields = []string{"plan", "prerender_max_bytes", "prerender_max_packets"}
	// pacedFields tune rate control, so they need a rate.
	pacedFields = []string{"burst", "wait", "wake_boost", "rt_priority", "fail_under"}
	// txRingFields tune the afpacket TX ring, which no_tx_ring turns off.
	txRingFields = []string{"ring_depth", "tx_copy"}
	// plannedFor names the backends an option is for that this build does
	// not have yet (docs/architecture.md, "What comes next").
	plannedFor = map[string]string{"queue": "afxdp and dpdk", "xdp_mode": "afxdp", "busy_poll": "afxdp", "dpdk_args": "dpdk"}
)

// given reports whether the field of v (a Spec or RecvSpec, not a pointer)
// whose JSON name is field holds a non-zero value: an option the user gave.
// A name v has no field for is not given.
func given(v any, field string) bool {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := range rt.NumField() {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name == field {
			return !rv.Field(i).IsZero()
		}
	}
	return false
}

// checkBackendFields refuses every backend-specific field given (set
// reports which) that backend reg does not read.
func checkBackendFields(p *problems, reg backend.Registration, set func(field string) bool) {
	for _, field := range backend.SpecificOptions() {
		if !set(field) || reg.Reads(field) {
			continue
		}
		names := backend.Reading(field)
		drop := "drop {" + field + "}"
		switch {
		case len(names) == 0 && plannedFor[field] != "":
			p.add(field, "", fmt.Sprintf("applies to backend %s, which this build does not have", plannedFor[field]), drop)
		case len(names) == 0:
			p.add(field, "", "applies to no backend of this build", "drop it")
		case len(names) == 1:
			p.add(field, "", fmt.Sprintf("applies to backend %s, not to %s", names[0], reg.Name), drop+", or use {backend} "+names[0])
		default:
			p.add(field, "", fmt.Sprintf("applies to backends %s, not to %s", joinNames(names), reg.Name), drop+", or use one of those backends")
		}
	}
}

// checkApplies applies the rule to a Spec: the backend-specific fields,
// the payload and template ones, the paced ones (paced: whether Rate
// gives a rate) and the TX-ring ones.
func checkApplies(p *problems, s Spec, reg backend.Registration, paced bool) {
	// With a share of the link (--rate 50%), the interface gives the
	// link's speed, whatever the backend: null tells what the generator
	// does at half of eth1's line rate.
	r, err := pace.ParseRate(s.Rate)
	share := err == nil && r.LinkShare()
	set := func(f string) bool { return given(s, f) && !(share && f == "interface") }
	checkBackendFields(p, reg, set)
	if s.Verify != "" && !reg.Payload {
		p.add("verify", "", fmt.Sprintf("checks payload frames (backends %s), not the packets of %s", joinNames(backendsWhere(true)), reg.Name), "drop {verify} (packets carry their own checksums)")
	}
	if reg.Payload {
		if s.Template != "" || s.TemplateText != "" {
			what := s.Template
			if what == "" {
				what = "{template_text}"
			}
			p.add("template", "", fmt.Sprintf("backend %s carries payload frames ({size}, {fill}), not packet templates", reg.Name), fmt.Sprintf("drop %s, or use one of the backends %s", what, joinNames(backendsWhere(false))))
		}
		for _, f := range packetFields {
			if set(f) {
				p.add(f, "", fmt.Sprintf("applies to packet templates (backends %s), not to the payload frames of %s", joinNames(backendsWhere(false)), reg.Name), "drop {"+f+"}")
			}
		}
		if s.Seed != nil && s.Fill != "random" {
			fill := s.Fill
			if fill == "" {
				fill = "pattern"
			}
			p.add("seed", "", fmt.Sprintf("seeds {fill} random, but the fill is %q", fill), "add {fill} random, or drop {seed}")
		}
	} else {
		what := "the embedded default template"
		if s.Template != "" {
			what = "template " + s.Template
		} else if s.TemplateText != "" {
			what = "the template"
		}
		for _, f := range payloadFields {
			if set(f) && f != "verify" {
				p.add(f, "", fmt.Sprintf("applies to payload frames (backends %s), not to %s on %s", joinNames(backendsWhere(true)), what, reg.Name), "drop {"+f+"}")
			}
		}
	}
	if !paced {
		for _, f := range pacedFields {
			if set(f) {
				p.add(f, "", "tunes rate control, and this run is flat out", "add {rate} (e.g. {rate} 1Mpps), or drop {"+f+"}")
			}
		}
	}
	if s.NoTxRing {
		for _, f := range txRingFields {
			if set(f) {
				p.add(f, "", "tunes the TX ring, which {no_tx_ring} turns off (sendmmsg)", "drop one of them")
			}
		}
	}
}

// backendsWhere lists the sending backends that carry payload frames
// (payload true) or packet templates (false).
func backendsWhere(payload bool) []string {
	var names []string
	for _, r := range backend.All() {
		if r.Payload == payload && r.Open != nil {
			names = append(names, r.Name)
		}
	}
	return names
}
