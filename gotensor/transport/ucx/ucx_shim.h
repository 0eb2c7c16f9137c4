//go:build ucx

// UCX shim for gotensor/transport/ucx. Every UCX callback lives here and only
// queues an event; Go drains the queue on the one thread that owns the
// worker (see ucx_worker.go). Nothing here is thread-safe except gt_wake.
#ifndef GT_UCX_SHIM_H
#define GT_UCX_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

enum { GT_AM_HANDSHAKE = 1, GT_AM_MSG = 2 };
enum { GT_EV_AM = 1, GT_EV_CONN, GT_EV_DONE, GT_EV_EP_ERR };

typedef struct gt_event {
	int kind;
	int status;              /* ucs_status_t */
	unsigned am_id;
	int rndv;                /* data is a rendezvous descriptor, fetch with gt_recv_rndv */
	uint64_t id;             /* GT_EV_DONE: the operation's id */
	ucp_ep_h ep;             /* GT_EV_AM: reply endpoint; GT_EV_EP_ERR: failed endpoint */
	ucp_conn_request_h conn; /* GT_EV_CONN */
	void *hdr;               /* malloc'd copy of the AM header */
	size_t hdr_len;
	void *data;              /* malloc'd copy of eager data, or the rendezvous descriptor */
	size_t len;
	struct gt_event *next;
} gt_event;

typedef struct gt_worker gt_worker;

/* tls and net_devices may be "" (UCX's own defaults / UCX_* environment). */
int gt_init(gt_worker **out, const char *tls, const char *net_devices, char *err, size_t errlen);
void gt_destroy(gt_worker *w);
size_t gt_max_am_header(gt_worker *w);

int gt_listen(gt_worker *w, const char *ip, int port, int *bound_port);
int gt_connect(gt_worker *w, const char *ip, int port, int err_peer, ucp_ep_h *out);
int gt_accept(gt_worker *w, ucp_conn_request_h req, int err_peer, ucp_ep_h *out);
void gt_reject(gt_worker *w, ucp_conn_request_h req);
void gt_close_ep(gt_worker *w, ucp_ep_h ep, int force);

/* Operations return 0 when done at once, 1 when a GT_EV_DONE with id follows, <0 a ucs_status_t. */
int gt_send(gt_worker *w, ucp_ep_h ep, unsigned am_id, void *hdr, size_t hdr_len,
            const void *data, size_t len, uint64_t id); /* takes ownership of hdr (malloc'd) */
int gt_recv_rndv(gt_worker *w, void *desc, void *buf, size_t len, uint64_t id);
void gt_am_release(gt_worker *w, void *desc);
int gt_put(gt_worker *w, ucp_ep_h ep, const void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey, uint64_t id);
int gt_get(gt_worker *w, ucp_ep_h ep, void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey, uint64_t id);
int gt_flush(gt_worker *w, ucp_ep_h ep, uint64_t id);

/* One-sided access: register memory and pack its remote key (copied into rkey_out). */
int gt_mem_map(gt_worker *w, void *addr, size_t len, ucp_mem_h *memh, void *rkey_out, size_t *rkey_len);
void gt_mem_unmap(gt_worker *w, ucp_mem_h memh);
int gt_rkey_unpack(ucp_ep_h ep, const void *buf, ucp_rkey_h *rkey);
void gt_rkey_destroy(ucp_rkey_h rkey);

unsigned gt_progress(gt_worker *w);
gt_event *gt_pop(gt_worker *w);
void gt_free_event(gt_event *e);
/* Sleeps until the worker has work, gt_wake is called, or timeout_ms passes. */
void gt_wait(gt_worker *w, int timeout_ms);
void gt_wake(gt_worker *w);

const char *gt_status_string(int status);
/* ucp_ep_print_info into buf: which transports carry each lane */
size_t gt_ep_info(ucp_ep_h ep, char *buf, size_t len);

#endif
