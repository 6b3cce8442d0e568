// Package template turns packet templates (*.wpg.yaml) into frames.
//
// Parse decodes a template into a Spec: plain, deterministic data (no I/O,
// strict YAML: unknown keys are errors; every error names file:line:column,
// the field path and a fix). Default returns the embedded default template.
//
// Compile turns a Spec into a Source for one engine worker: each stream
// becomes a frame image plus patchers for the fields that vary, written at
// fixed offsets with incremental checksum updates (streaming), or a set of
// frames rendered once before sending (prerendering) when they fit the
// prerender limits. Either way every frame gets its wpg signature (stream,
// sequence number, transmit time) and correct IPv4, UDP, TCP, ICMP,
// ICMPv6 and GRE checksums (wrong only where the template asks), inside
// tunnels too: a stream's layer stack (Headers) may carry MPLS labels, raw
// bytes, TCP options and a GRE, VXLAN or Geneve tunnel with a stack of its
// own, whose checksums are finished innermost first. Worker i of W renders
// the packets of per-stream index k ≡ i (mod W), so field values and
// sequence numbers do not depend on W; fields named in a stream's tuple
// vary as a cross product of their values (Value.Div), and a fragmented
// stream sends each datagram as IP fragments.
//
// A stream may keep its own schedule (rate:, burst:, delay:): the Source is
// then timed (Timed), renders the streams' frames in the order of their due
// times, and is a pace.Timetable the worker's pacer follows. A stream may
// also replay a capture (pcap: FILE, package frame/pcapread), its records
// read from disk as they are sent, with fields rewritten and checksums
// fixed where asked, at its own timing or a rate; Spec.LoadCaptures reads
// each capture once beforehand and checks every record.
//
// Render allocates nothing (a replay rewinding its capture for another
// pass allocates the file's header reader); the package needs no
// privileges, and reads only the captures the template names. The template
// language is documented in docs/templates.md.
package template
