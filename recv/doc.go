// Package recv is the receiving side of wpg: it verifies what arrives and
// counts it.
//
// A Tracker keeps, per stream, the frames received, lost (sequence gaps),
// duplicated, reordered (late arrivals that fill an earlier gap, judged
// within each sender worker's share of the stream: the signature carries
// the worker count) and their bytes, plus the one-way latency (receive time minus the transmit time in
// the wpg signature) when sender and receiver share CLOCK_MONOTONIC, which is
// the case on one host. Memory is bounded: each stream keeps a sliding window
// bitmap of the last WindowSize sequence numbers, and nothing is allocated
// per frame once a stream has been seen.
//
// Run drives a backend.Receiver with a Decoder (DecodePacket for network
// packets, frame.DecodePayload for payload frames of local paths) into a
// Tracker until an expected count, a duration or an idle timeout is reached.
//
// The package needs no privileges itself; opening a receiver may (an
// AF_PACKET receiver needs CAP_NET_RAW).
package recv
