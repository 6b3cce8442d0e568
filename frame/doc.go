// Package frame defines what wpg puts inside the frames it sends so that a
// receiver can verify them: the 20-byte signature carried at the end of every
// network packet (stream id, sequence number, transmit timestamp), and the
// header of payload frames used on local and device paths.
//
// The package is pure: no I/O, no privileges.
package frame
