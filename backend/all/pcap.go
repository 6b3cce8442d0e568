//go:build pcap

package all

import _ "github.com/wpg-dev/wpg/backend/pcap" // libpcap injection (cgo, -tags pcap)
