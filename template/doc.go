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
// sequence number, transmit time) and correct IPv4, UDP, TCP, ICMP and
// ICMPv6 checksums. Worker i of W renders the packets of per-stream index
// k ≡ i (mod W), so field values and sequence numbers do not depend on W.
//
// Render allocates nothing; the package needs no privileges. The template
// language is documented in docs/templates.md.
package template
