//go:build dpdk

package all

import _ "github.com/wpg-dev/wpg/backend/dpdk" // DPDK ethdev (cgo, -tags dpdk)
