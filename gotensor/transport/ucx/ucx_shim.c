//go:build ucx

#include "ucx_shim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define GT_MAX_RKEY 4096

struct gt_worker {
	ucp_context_h ctx;
	ucp_worker_h w;
	ucp_listener_h listener;
	int efd;    /* the worker's event fd */
	int wakefd; /* eventfd other threads write to wake gt_wait */
	gt_event *head, *tail;
};

/* an operation in flight: what its completion reports and frees */
typedef struct {
	gt_worker *w;
	uint64_t id;
	void *hdr;
} gt_op;

static void push(gt_worker *w, gt_event *e) {
	e->next = NULL;
	if (w->tail) w->tail->next = e; else w->head = e;
	w->tail = e;
}

static gt_event *event(int kind) { return calloc(1, sizeof(gt_event)); }

static void done(gt_op *op, ucs_status_t status) {
	gt_event *e = event(GT_EV_DONE);
	e->kind = GT_EV_DONE;
	e->id = op->id;
	e->status = status;
	push(op->w, e);
	free(op->hdr);
	free(op);
}

static void send_cb(void *req, ucs_status_t status, void *user) {
	done(user, status);
	ucp_request_free(req);
}

static void recv_cb(void *req, ucs_status_t status, size_t len, void *user) {
	(void)len;
	done(user, status);
	ucp_request_free(req);
}

static ucs_status_t am_cb(gt_worker *w, unsigned id, const void *hdr, size_t hlen, void *data, size_t len,
                          const ucp_am_recv_param_t *p) {
	gt_event *e = event(GT_EV_AM);
	e->kind = GT_EV_AM;
	e->am_id = id;
	e->ep = (p->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? p->reply_ep : NULL;
	e->hdr = malloc(hlen ? hlen : 1);
	memcpy(e->hdr, hdr, hlen);
	e->hdr_len = hlen;
	e->len = len;
	if (p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
		e->rndv = 1;
		e->data = data; /* released by gt_recv_rndv or gt_am_release */
		push(w, e);
		return UCS_INPROGRESS;
	}
	if (len) { /* eager data is only valid inside this callback */
		e->data = malloc(len);
		memcpy(e->data, data, len);
	}
	push(w, e);
	return UCS_OK;
}

static ucs_status_t am_handshake(void *arg, const void *h, size_t hl, void *d, size_t l, const ucp_am_recv_param_t *p) {
	return am_cb(arg, GT_AM_HANDSHAKE, h, hl, d, l, p);
}

static ucs_status_t am_msg(void *arg, const void *h, size_t hl, void *d, size_t l, const ucp_am_recv_param_t *p) {
	return am_cb(arg, GT_AM_MSG, h, hl, d, l, p);
}

static void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status) {
	gt_event *e = event(GT_EV_EP_ERR);
	e->kind = GT_EV_EP_ERR;
	e->ep = ep;
	e->status = status;
	push(arg, e);
}

static void conn_cb(ucp_conn_request_h req, void *arg) {
	gt_event *e = event(GT_EV_CONN);
	e->kind = GT_EV_CONN;
	e->conn = req;
	push(arg, e);
}

static int set_handler(gt_worker *w, unsigned id, ucp_am_recv_callback_t cb) {
	ucp_am_handler_param_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
	               UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
	p.id = id;
	p.cb = cb;
	p.arg = w;
	p.flags = UCP_AM_FLAG_WHOLE_MSG;
	return ucp_worker_set_am_recv_handler(w->w, &p);
}

int gt_init(gt_worker **out, const char *tls, const char *net_devices, char *err, size_t errlen) {
	gt_worker *w = calloc(1, sizeof *w);
	w->efd = w->wakefd = -1;
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	const char *what = "ucp_config_read";
	if (st != UCS_OK) goto fail;
	if (tls && *tls && (st = ucp_config_modify(cfg, "TLS", tls)) != UCS_OK) { what = "UCX_TLS"; ucp_config_release(cfg); goto fail; }
	if (net_devices && *net_devices && (st = ucp_config_modify(cfg, "NET_DEVICES", net_devices)) != UCS_OK) {
		what = "UCX_NET_DEVICES";
		ucp_config_release(cfg);
		goto fail;
	}
	ucp_params_t pp;
	memset(&pp, 0, sizeof pp);
	pp.field_mask = UCP_PARAM_FIELD_FEATURES;
	pp.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
	st = ucp_init(&pp, cfg, &w->ctx);
	ucp_config_release(cfg);
	what = "ucp_init";
	if (st != UCS_OK) goto fail;
	ucp_worker_params_t wp;
	memset(&wp, 0, sizeof wp);
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	what = "ucp_worker_create";
	if ((st = ucp_worker_create(w->ctx, &wp, &w->w)) != UCS_OK) goto fail;
	what = "ucp_worker_get_efd";
	if ((st = ucp_worker_get_efd(w->w, &w->efd)) != UCS_OK) goto fail;
	what = "am handler";
	if ((st = set_handler(w, GT_AM_HANDSHAKE, am_handshake)) != UCS_OK) goto fail;
	if ((st = set_handler(w, GT_AM_MSG, am_msg)) != UCS_OK) goto fail;
	w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->wakefd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		gt_destroy(w);
		return -1;
	}
	*out = w;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", what, ucs_status_string(st));
	gt_destroy(w);
	return st < 0 ? st : -1;
}

void gt_destroy(gt_worker *w) {
	if (!w) return;
	gt_event *e;
	while ((e = gt_pop(w))) { /* before the listener goes: pending requests are rejected through it */
		if (e->kind == GT_EV_AM && e->rndv) ucp_am_data_release(w->w, e->data);
		if (e->kind == GT_EV_CONN && w->listener) ucp_listener_reject(w->listener, e->conn);
		gt_free_event(e);
	}
	if (w->listener) ucp_listener_destroy(w->listener);
	if (w->w) ucp_worker_destroy(w->w);
	if (w->ctx) ucp_cleanup(w->ctx);
	if (w->wakefd >= 0) close(w->wakefd);
	free(w);
}

size_t gt_max_am_header(gt_worker *w) {
	ucp_worker_attr_t a;
	memset(&a, 0, sizeof a);
	a.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
	if (ucp_worker_query(w->w, &a) != UCS_OK) return 0;
	return a.max_am_header;
}

static int sockaddr_of(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len) {
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof *in4;
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof *in6;
		return 0;
	}
	return UCS_ERR_INVALID_ADDR;
}

int gt_listen(gt_worker *w, const char *ip, int port, int *bound_port) {
	struct sockaddr_storage ss;
	socklen_t sl;
	int rc = sockaddr_of(ip, port, &ss, &sl);
	if (rc) return rc;
	ucp_listener_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
	p.sockaddr.addr = (struct sockaddr *)&ss;
	p.sockaddr.addrlen = sl;
	p.conn_handler.cb = conn_cb;
	p.conn_handler.arg = w;
	ucs_status_t st = ucp_listener_create(w->w, &p, &w->listener);
	if (st != UCS_OK) return st;
	ucp_listener_attr_t a;
	memset(&a, 0, sizeof a);
	a.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
	if ((st = ucp_listener_query(w->listener, &a)) != UCS_OK) return st;
	*bound_port = a.sockaddr.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&a.sockaddr)->sin6_port)
	                                               : ntohs(((struct sockaddr_in *)&a.sockaddr)->sin_port);
	return 0;
}

static void ep_common(gt_worker *w, ucp_ep_params_t *p, int err_peer) {
	p->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	p->err_mode = err_peer ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
	p->err_handler.cb = ep_err_cb;
	p->err_handler.arg = w;
}

int gt_connect(gt_worker *w, const char *ip, int port, int err_peer, ucp_ep_h *out) {
	struct sockaddr_storage ss;
	socklen_t sl;
	int rc = sockaddr_of(ip, port, &ss, &sl);
	if (rc) return rc;
	ucp_ep_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
	p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
	p.sockaddr.addr = (struct sockaddr *)&ss;
	p.sockaddr.addrlen = sl;
	ep_common(w, &p, err_peer);
	return ucp_ep_create(w->w, &p, out);
}

int gt_accept(gt_worker *w, ucp_conn_request_h req, int err_peer, ucp_ep_h *out) {
	ucp_ep_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
	p.conn_request = req;
	ep_common(w, &p, err_peer);
	return ucp_ep_create(w->w, &p, out);
}

void gt_reject(gt_worker *w, ucp_conn_request_h req) {
	if (w->listener) ucp_listener_reject(w->listener, req);
}

void gt_close_ep(gt_worker *w, ucp_ep_h ep, int force) {
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
	void *req = ucp_ep_close_nbx(ep, &p);
	if (req == NULL || UCS_PTR_IS_ERR(req)) return;
	/* bounded: a graceful close waits for the peer, which may be gone */
	for (int i = 0; i < 200000 && ucp_request_check_status(req) == UCS_INPROGRESS; i++) ucp_worker_progress(w->w);
	if (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_request_cancel(w->w, req);
	ucp_request_free(req);
}

static gt_op *new_op(gt_worker *w, uint64_t id, void *hdr, ucp_request_param_t *p) {
	gt_op *op = malloc(sizeof *op);
	op->w = w;
	op->id = id;
	op->hdr = hdr;
	memset(p, 0, sizeof *p);
	p->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p->user_data = op;
	return op;
}

static int started(gt_op *op, ucs_status_ptr_t r) {
	if (r == NULL) { /* completed at once: no event follows */
		free(op->hdr);
		free(op);
		return 0;
	}
	if (UCS_PTR_IS_ERR(r)) {
		free(op->hdr);
		free(op);
		return UCS_PTR_STATUS(r);
	}
	return 1;
}

int gt_send(gt_worker *w, ucp_ep_h ep, unsigned am_id, void *hdr, size_t hdr_len, const void *data, size_t len,
            uint64_t id) {
	ucp_request_param_t p;
	gt_op *op = new_op(w, id, hdr, &p);
	p.cb.send = send_cb;
	p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = UCP_AM_SEND_FLAG_REPLY;
	return started(op, ucp_am_send_nbx(ep, am_id, hdr, hdr_len, data, len, &p));
}

int gt_recv_rndv(gt_worker *w, void *desc, void *buf, size_t len, uint64_t id) {
	ucp_request_param_t p;
	gt_op *op = new_op(w, id, NULL, &p);
	p.cb.recv_am = recv_cb;
	return started(op, ucp_am_recv_data_nbx(w->w, desc, buf, len, &p));
}

void gt_am_release(gt_worker *w, void *desc) { ucp_am_data_release(w->w, desc); }

int gt_put(gt_worker *w, ucp_ep_h ep, const void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey, uint64_t id) {
	ucp_request_param_t p;
	gt_op *op = new_op(w, id, NULL, &p);
	p.cb.send = send_cb;
	return started(op, ucp_put_nbx(ep, buf, len, raddr, rkey, &p));
}

int gt_get(gt_worker *w, ucp_ep_h ep, void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey, uint64_t id) {
	ucp_request_param_t p;
	gt_op *op = new_op(w, id, NULL, &p);
	p.cb.send = send_cb;
	return started(op, ucp_get_nbx(ep, buf, len, raddr, rkey, &p));
}

int gt_flush(gt_worker *w, ucp_ep_h ep, uint64_t id) {
	ucp_request_param_t p;
	gt_op *op = new_op(w, id, NULL, &p);
	p.cb.send = send_cb;
	return started(op, ucp_ep_flush_nbx(ep, &p));
}

int gt_mem_map(gt_worker *w, void *addr, size_t len, ucp_mem_h *memh, void *rkey_out, size_t *rkey_len) {
	ucp_mem_map_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	p.address = addr;
	p.length = len;
	ucs_status_t st = ucp_mem_map(w->ctx, &p, memh);
	if (st != UCS_OK) return st;
	void *rb;
	size_t rl;
	if ((st = ucp_rkey_pack(w->ctx, *memh, &rb, &rl)) != UCS_OK) {
		ucp_mem_unmap(w->ctx, *memh);
		return st;
	}
	if (rl > *rkey_len) {
		ucp_rkey_buffer_release(rb);
		ucp_mem_unmap(w->ctx, *memh);
		return UCS_ERR_BUFFER_TOO_SMALL;
	}
	memcpy(rkey_out, rb, rl);
	*rkey_len = rl;
	ucp_rkey_buffer_release(rb);
	return 0;
}

void gt_mem_unmap(gt_worker *w, ucp_mem_h memh) { ucp_mem_unmap(w->ctx, memh); }

int gt_rkey_unpack(ucp_ep_h ep, const void *buf, ucp_rkey_h *rkey) { return ucp_ep_rkey_unpack(ep, buf, rkey); }

void gt_rkey_destroy(ucp_rkey_h rkey) { ucp_rkey_destroy(rkey); }

unsigned gt_progress(gt_worker *w) {
	unsigned n = 0, k;
	while ((k = ucp_worker_progress(w->w)) != 0) n += k;
	return n;
}

gt_event *gt_pop(gt_worker *w) {
	gt_event *e = w->head;
	if (e) {
		w->head = e->next;
		if (!w->head) w->tail = NULL;
	}
	return e;
}

void gt_free_event(gt_event *e) {
	free(e->hdr);
	if (!e->rndv) free(e->data);
	free(e);
}

void gt_wait(gt_worker *w, int timeout_ms) {
	if (w->head) return;
	if (ucp_worker_arm(w->w) == UCS_ERR_BUSY) return; /* events pending: progress again */
	struct pollfd fds[2] = {{.fd = w->efd, .events = POLLIN}, {.fd = w->wakefd, .events = POLLIN}};
	if (poll(fds, 2, timeout_ms) > 0 && (fds[1].revents & POLLIN)) {
		uint64_t v;
		if (read(w->wakefd, &v, sizeof v) < 0) { /* EAGAIN: another wake already drained it */ }
	}
}

void gt_wake(gt_worker *w) {
	uint64_t one = 1;
	if (write(w->wakefd, &one, sizeof one) < 0) { /* counter saturated: a wake is pending anyway */ }
}

const char *gt_status_string(int status) { return ucs_status_string((ucs_status_t)status); }

size_t gt_ep_info(ucp_ep_h ep, char *buf, size_t len) {
	FILE *f = fmemopen(buf, len, "w");
	if (!f) return 0;
	ucp_ep_print_info(ep, f);
	long n = ftell(f);
	fclose(f);
	return n < 0 ? 0 : (size_t)n;
}
