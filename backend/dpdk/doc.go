// Package dpdk is wpg's DPDK backend (--backend dpdk), built with
// -tags dpdk on DPDK 22.11 (libdpdk-dev, found with pkg-config; the
// default build stays pure Go and says how to get it).
//
// A job's instance initialises the EAL once per process with the job's
// EAL arguments (backend.DPDKOptions: --vdev, --no-huge, -m,
// --file-prefix, -a PCI, …), picks the port named by Net.Interface (a port
// id or a device name), configures it with Net.Queue + Workers TX queues
// and starts it. Worker i sends on TX queue Net.Queue + i from its own
// thread, with an mbuf pool of its own on the port's NUMA socket: a
// Reserve hands out the data rooms of bulk-allocated mbufs, the engine
// renders frames into them in place, and Commit hands the burst to
// rte_eth_tx_burst, offering what the device did not take again (the
// report counts those retries) and freeing nothing that was sent. The
// receiving side (wpg recv --backend dpdk) polls RX queue 0 and hands the
// recv package views of the mbufs' data.
//
// The cgo boundary is the internal package rte; it is crossed once per
// burst. Without a NIC or hugepages the backend runs on DPDK's virtual
// devices: --dpdk-args "--no-huge -m 512 --in-memory --vdev net_null0"
// (a sink) or "--vdev net_af_packet0,iface=veth0" (AF_PACKET on a veth).
// docs/dpdk.md has the set-up and the errors.
package dpdk
