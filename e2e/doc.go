// Package e2e holds end-to-end tests that build the wpg binary and run it as
// a user would: bad input, pcap output read back by tshark, Ctrl-C, and the
// data paths between real processes and network namespaces.
package e2e
