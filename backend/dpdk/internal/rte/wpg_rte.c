//go:build dpdk && linux && cgo

// wpg_rte.c: the C side of package rte, which cgo builds with rte.go's
// flags (pkg-config libdpdk): the EAL's log ring, the port set-up and
// facts, the TX and RX queues of the hot path (one crossing per burst)
// and the mbuf pool. wpg_rte.h declares what Go calls.
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "wpg_rte.h"

// The EAL's log goes into a ring of the last WPG_LOG bytes (a library
// prints nothing): errors quote its tail.
#define WPG_LOG 8192
static char wpg_log[WPG_LOG];
static size_t wpg_log_pos; // bytes written in all
static pthread_mutex_t wpg_log_mu = PTHREAD_MUTEX_INITIALIZER;

static ssize_t wpg_log_write(void *c, const char *buf, size_t n) {
	(void)c;
	pthread_mutex_lock(&wpg_log_mu);
	for (size_t i = 0; i < n; i++)
		wpg_log[(wpg_log_pos + i) % WPG_LOG] = buf[i];
	wpg_log_pos += n;
	pthread_mutex_unlock(&wpg_log_mu);
	return (ssize_t)n;
}

// wpg_log_tail copies the last bytes of the log (at most cap) into out.
size_t wpg_log_tail(char *out, size_t cap) {
	pthread_mutex_lock(&wpg_log_mu);
	size_t n = wpg_log_pos < WPG_LOG ? wpg_log_pos : WPG_LOG;
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++)
		out[i] = wpg_log[(wpg_log_pos - n + i) % WPG_LOG];
	pthread_mutex_unlock(&wpg_log_mu);
	return n;
}

int wpg_log_open(void) {
	cookie_io_functions_t io = {.write = wpg_log_write};
	FILE *f = fopencookie(NULL, "w", io);
	if (f == NULL)
		return -1;
	setvbuf(f, NULL, _IOLBF, 0);
	return rte_openlog_stream(f);
}

int wpg_errno(void) { return rte_errno; }

// wpg_port_next is RTE_ETH_FOREACH_DEV's step: the first valid port from
// p, or RTE_MAX_ETHPORTS.
uint16_t wpg_port_next(uint16_t p) {
	return rte_eth_find_next_owned_by(p, RTE_ETH_DEV_NO_OWNER);
}

int wpg_dev_info(uint16_t port, struct wpg_devinfo *d) {
	struct rte_eth_dev_info info;
	memset(d, 0, sizeof(*d));
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	rte_eth_dev_get_name_by_port(port, d->name);
	if (info.driver_name != NULL)
		snprintf(d->driver, sizeof(d->driver), "%s", info.driver_name);
	d->max_rx = info.max_rx_queues;
	d->max_tx = info.max_tx_queues;
	d->tx_desc_max = info.tx_desc_lim.nb_max;
	d->rx_desc_max = info.rx_desc_lim.nb_max;
	d->socket = rte_eth_dev_socket_id(port);
	if (rte_eth_dev_get_mtu(port, &d->mtu) != 0)
		d->mtu = 0;
	return 0;
}

// wpg_port_setup configures port with nrx RX and ntx TX queues of the
// given depths (adjusted to the device's limits, written back), sets every
// queue up and starts the port. *step names the call that failed.
int wpg_port_setup(uint16_t port, uint16_t nrx, uint16_t ntx, uint16_t *rxd, uint16_t *txd,
		int socket, struct rte_mempool *rxpool, const char **step) {
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	int rc;
	*step = "rte_eth_dev_configure";
	if ((rc = rte_eth_dev_configure(port, nrx, ntx, &conf)) != 0)
		return rc;
	*step = "rte_eth_dev_adjust_nb_rx_tx_desc";
	if ((rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, rxd, txd)) != 0)
		return rc;
	for (uint16_t q = 0; q < ntx; q++) {
		*step = "rte_eth_tx_queue_setup";
		if ((rc = rte_eth_tx_queue_setup(port, q, *txd, socket, NULL)) != 0)
			return rc;
	}
	for (uint16_t q = 0; q < nrx; q++) {
		*step = "rte_eth_rx_queue_setup";
		if ((rc = rte_eth_rx_queue_setup(port, q, *rxd, socket, NULL, rxpool)) != 0)
			return rc;
	}
	*step = "rte_eth_dev_start";
	return rte_eth_dev_start(port);
}

void wpg_link_get(uint16_t port, struct wpg_link *l) {
	struct rte_eth_link link;
	memset(&link, 0, sizeof(link));
	rte_eth_link_get_nowait(port, &link);
	l->speed = link.link_speed;
	l->up = link.link_status;
	l->duplex = link.link_duplex;
}

int wpg_stats_get(uint16_t port, struct wpg_stats *s) {
	struct rte_eth_stats st;
	int rc = rte_eth_stats_get(port, &st);
	if (rc != 0)
		return rc;
	s->ipackets = st.ipackets;
	s->opackets = st.opackets;
	s->ibytes = st.ibytes;
	s->obytes = st.obytes;
	s->imissed = st.imissed;
	s->ierrors = st.ierrors;
	s->oerrors = st.oerrors;
	s->rx_nombuf = st.rx_nombuf;
	return 0;
}

// WPG_DATA is where a frame starts in an mbuf of a pool with no private
// area (wpg_pool_create): rte_pktmbuf_init puts the buffer right behind
// the mbuf, and the frame RTE_PKTMBUF_HEADROOM into it.
#define WPG_DATA (sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM)

// wpg_tx_fill tops m up to want mbufs (all or nothing, as the bulk get
// goes) and returns how many are ready. It does not touch the mbufs: the
// data pointers follow from the pool's layout (the Go side computes
// them), and wpg_tx_commit writes the fields a frame needs (every extra
// pass over a burst's mbufs cost about 3 ns a frame on net_null). Not
// rte_pktmbuf_alloc_bulk, whose reset writes both cache lines of every
// mbuf: the pool's mbufs are only ever this queue's, sent whole and freed
// by the driver, which hands them back with next NULL, one segment and a
// reference count of 1 (rte_pktmbuf_prefree_seg).
static uint32_t wpg_tx_fill_q(struct wpg_txq *q, uint32_t want) {
	if (want > q->cap)
		want = q->cap;
	if (q->have >= want)
		return q->have;
	uint32_t need = want - q->have;
	if (rte_mempool_get_bulk(q->pool, (void **)(q->m + q->have), need) != 0) {
		q->alloc_fail++;
		return q->have;
	}
	q->have = want;
	return q->have;
}

uint32_t wpg_tx_fill(uintptr_t qp, uint32_t want) {
	return wpg_tx_fill_q((struct wpg_txq *)qp, want);
}

// wpg_tx_push offers the rest of the burst (m[off:n]) to the device, up
// to tries times while it takes some; when the whole burst is taken it
// moves the mbufs not rendered into (m[n:have]) to the front and tops the
// queue up to cap for the next burst. It returns the frames still unsent.
static uint32_t wpg_tx_push_q(struct wpg_txq *q, uint32_t tries) {
	while (q->off < q->n && tries-- > 0) {
		uint16_t want = (uint16_t)(q->n - q->off);
		uint16_t k = rte_eth_tx_burst(q->port, q->queue, q->m + q->off, want);
		q->calls++;
		if (k < want)
			q->short_calls++;
		q->off += k;
	}
	if (q->off < q->n)
		return q->n - q->off;
	uint32_t rest = q->have - q->n;
	if (rest > 0)
		memmove(q->m, q->m + q->n, rest * sizeof(q->m[0]));
	q->have = rest;
	q->off = q->n = 0;
	wpg_tx_fill_q(q, q->cap);
	return 0;
}

uint32_t wpg_tx_push(uintptr_t qp, uint32_t tries) {
	return wpg_tx_push_q((struct wpg_txq *)qp, tries);
}

// The two 8-byte words wpg_tx_commit writes per mbuf, as DPDK's own
// drivers rearm theirs: data_off, refcnt, nb_segs, port (the rearm word),
// and pkt_len, data_len, vlan_tci.
_Static_assert(offsetof(struct rte_mbuf, refcnt) == offsetof(struct rte_mbuf, data_off) + 2 &&
	offsetof(struct rte_mbuf, nb_segs) == offsetof(struct rte_mbuf, data_off) + 4 &&
	offsetof(struct rte_mbuf, port) == offsetof(struct rte_mbuf, data_off) + 6 &&
	offsetof(struct rte_mbuf, data_len) == offsetof(struct rte_mbuf, pkt_len) + 4 &&
	offsetof(struct rte_mbuf, vlan_tci) == offsetof(struct rte_mbuf, pkt_len) + 6,
	"rte_mbuf layout");
#define WPG_REARM ((uint64_t)RTE_PKTMBUF_HEADROOM | 1ull << 16 | 1ull << 32 | (uint64_t)RTE_MBUF_PORT_INVALID << 48)

// wpg_tx_commit sends the first n mbufs, len[i] bytes each (the Go
// side's lengths, as they are: a Go int is an int64_t), see wpg_tx_push.
// Besides the lengths it sets data_off back to the headroom (a driver may
// move it and free the mbuf so: virtio prepends its header there), and
// the reference count and segments to the 1 they are: two 8-byte stores
// into the mbuf's first cache line (vlan_tci, which no TX flag of ours
// asks for, stays 0).
uint32_t wpg_tx_commit(uintptr_t qp, const int64_t *len, uint32_t n, uint32_t tries) {
	struct wpg_txq *q = (struct wpg_txq *)qp;
	struct rte_mbuf **ms = q->m;
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *m = ms[i];
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
		uint64_t rearm = WPG_REARM, lens = (uint64_t)(uint32_t)len[i] | (uint64_t)(uint16_t)len[i] << 32;
		memcpy(&m->data_off, &rearm, 8);
		memcpy(&m->pkt_len, &lens, 8);
#else
		m->data_off = RTE_PKTMBUF_HEADROOM;
		m->data_len = (uint16_t)len[i];
		m->pkt_len = (uint32_t)len[i];
#endif
	}
	q->bursts++;
	q->off = 0;
	q->n = n;
	return wpg_tx_push_q(q, tries);
}

void wpg_tx_release(struct wpg_txq *q) {
	if (q->have > 0)
		rte_pktmbuf_free_bulk(q->m, q->have);
	q->have = q->off = q->n = 0;
}

uint32_t wpg_rx_next(struct wpg_rxq *q, uint32_t want) {
	if (q->have > 0)
		rte_pktmbuf_free_bulk(q->m, q->have);
	q->have = 0;
	q->polls++;
	if (want > q->cap)
		want = q->cap;
	uint16_t k = rte_eth_rx_burst(q->port, q->queue, q->m, (uint16_t)want);
	uint32_t j = 0;
	for (uint16_t i = 0; i < k; i++) {
		struct rte_mbuf *m = q->m[i];
		if (m->nb_segs != 1) {
			q->segmented++;
			rte_pktmbuf_free(m);
			continue;
		}
		q->m[j] = m;
		q->data[j] = rte_pktmbuf_mtod(m, uint8_t *);
		q->len[j] = m->data_len;
		j++;
	}
	q->have = j;
	return j;
}

void wpg_rx_release(struct wpg_rxq *q) {
	if (q->have > 0)
		rte_pktmbuf_free_bulk(q->m, q->have);
	q->have = 0;
}

// wpg_pool_create makes a pool of mbufs without a private area and checks
// the layout WPG_DATA assumes on one of them.
struct rte_mempool *wpg_pool_create(const char *name, unsigned n, unsigned cache, uint16_t room, int socket) {
	struct rte_mempool *p = rte_pktmbuf_pool_create(name, n, cache, 0, room, socket);
	if (p == NULL)
		return NULL;
	struct rte_mbuf *m = rte_pktmbuf_alloc(p);
	int ok = m != NULL && rte_pktmbuf_mtod(m, uint8_t *) == (uint8_t *)m + WPG_DATA && m->data_off == RTE_PKTMBUF_HEADROOM;
	if (m != NULL)
		rte_pktmbuf_free(m);
	if (!ok) {
		rte_mempool_free(p);
		rte_errno = EPROTO;
		return NULL;
	}
	return p;
}

const char *wpg_version(void) { return rte_version(); }
unsigned wpg_lcore_id(void) { return rte_lcore_id(); }
