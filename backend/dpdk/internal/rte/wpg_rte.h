// wpg_rte.h: the C side of package rte (wpg_rte.c) as its Go side
// (rte.go) sees it: the structs both read, and the functions Go calls.
#ifndef WPG_RTE_H
#define WPG_RTE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

struct wpg_devinfo {
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	uint16_t max_rx, max_tx;
	uint16_t tx_desc_max, rx_desc_max;
	int socket;
	uint16_t mtu;
};

struct wpg_link {
	uint32_t speed;
	uint16_t up, duplex;
};

struct wpg_stats {
	uint64_t ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf;
};

// A TX queue of one worker: mbufs m[0:have] are allocated from pool and
// ready to render into (a frame starts WPG_DATA bytes into its mbuf). off
// counts the frames of the burst in flight that the device has taken.
// The functions of the hot path take the queue as an integer: cgo checks
// every pointer argument whose type holds pointers on every call.
struct wpg_txq {
	uint16_t port, queue;
	uint32_t cap, have, off, n;
	struct rte_mempool *pool;
	struct rte_mbuf **m;
	uint64_t bursts, calls, short_calls, alloc_fail;
};

// An RX queue: m[0:have] are the frames of the last burst, data[i] and
// len[i] their bytes (single-segment frames only: a chained one is
// counted in segmented and freed).
struct wpg_rxq {
	uint16_t port, queue;
	uint32_t cap, have;
	struct rte_mbuf **m;
	uint8_t **data;
	uint32_t *len;
	uint64_t polls, segmented;
};

// Called from Go (in the order of wpg_rte.c).
size_t wpg_log_tail(char *out, size_t cap);
int wpg_log_open(void);
int wpg_errno(void);
uint16_t wpg_port_next(uint16_t p);
int wpg_dev_info(uint16_t port, struct wpg_devinfo *d);
int wpg_port_setup(uint16_t port, uint16_t nrx, uint16_t ntx, uint16_t *rxd, uint16_t *txd,
		int socket, struct rte_mempool *rxpool, const char **step);
void wpg_link_get(uint16_t port, struct wpg_link *l);
int wpg_stats_get(uint16_t port, struct wpg_stats *s);
uint32_t wpg_tx_fill(uintptr_t qp, uint32_t want);
uint32_t wpg_tx_push(uintptr_t qp, uint32_t tries);
uint32_t wpg_tx_commit(uintptr_t qp, const int64_t *len, uint32_t n, uint32_t tries);
void wpg_tx_release(struct wpg_txq *q);
uint32_t wpg_rx_next(struct wpg_rxq *q, uint32_t want);
void wpg_rx_release(struct wpg_rxq *q);
struct rte_mempool *wpg_pool_create(const char *name, unsigned n, unsigned cache, uint16_t room, int socket);
const char *wpg_version(void);
unsigned wpg_lcore_id(void);

#endif
