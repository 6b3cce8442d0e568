// Package rte is the cgo boundary of the dpdk backend: the one package that
// calls DPDK 22.11 (libdpdk-dev, found with pkg-config). It owns the EAL
// (initialised once per process), the ports, the mbuf pools and the TX and
// RX queues, and crosses into C once per burst: a TxQueue's Commit hands a
// whole burst to rte_eth_tx_burst and tops the queue's mbufs up for the
// next one in the same call; an RxQueue's Next frees the previous burst and
// takes the next with rte_eth_rx_burst. DPDK's inline functions
// (rte_eth_tx_burst, rte_mempool_get_bulk, …) are reached through small
// C wrappers in the cgo preamble.
//
// The code is built only with -tags dpdk (and cgo); without the tag the
// package is this documentation only. It needs what DPDK needs: root, or
// the capabilities to map hugepages and the devices; with --no-huge and a
// virtual device (--vdev net_null0, net_af_packet0,iface=IFACE) no NIC and
// no hugepages.
package rte
