/* send_window.h: a rank's point-to-point sends on an algorithm's private communicator: at most a window of them in flight, and waits that keep the window going. */
#ifndef APSMPI_SEND_WINDOW_H
#define APSMPI_SEND_WINDOW_H

#include <mpi.h>
#include "algo/rsag_plan.h"
#include "call/compressed_call.h"

/* What rsag and the two-level schedule share: their sends, each an apsmpi_rsag_send (its
 * message, its request's index in req, and which of the two buffers it is in), posted at once
 * (window 0) or queued in the order they become ready with at most q.window in flight; and
 * every wait of a blocking operation keeps the queue going, since a peer may wait for a
 * queued send. */
typedef struct apsmpi_send_window {
    apsmpi_call *c; /* the call (its injected faults) */
    MPI_Comm comm;  /* the private duplicate of the call's communicator */
    int tag_base;   /* this call's range of tags on it */
    MPI_Request *req;
    const unsigned char *buf[2]; /* a send's buffer: buf[send.result] */
    apsmpi_rsag_sendq q;         /* the queue (window 0: unused) */
} apsmpi_send_window;

/* A message, ready: posted now (window 0), else queued for the window. */
int apsmpi_send_window_send(apsmpi_send_window *w, apsmpi_rsag_send s);
/* The sends in flight that completed leave the window, queued ones take their places. */
int apsmpi_send_window_pump(apsmpi_send_window *w);
/* Blocks until *req (which may be MPI_REQUEST_NULL) or a send in flight completes. */
int apsmpi_send_window_wait_any(apsmpi_send_window *w, MPI_Request *req);
/* Blocks until *req completes, keeping the queued sends going meanwhile. */
int apsmpi_send_window_wait(apsmpi_send_window *w, MPI_Request *req);
/* Waits for *req with nothing to do meanwhile: blocking, until it completes; else tests it
 * once (and pumps). 1 when it is complete or *rc holds an error; 0 when progress must return. */
int apsmpi_send_window_await(apsmpi_send_window *w, MPI_Request *req, int blocking, int *rc);
/* Waits for *req, doing work(arg, rc) meanwhile (encoding what is to be sent) while it returns
 * 1; once it has nothing left (0): blocking, waits; else returns. 1 when *req is complete or
 * *rc holds an error; 0 when progress must return. */
int apsmpi_send_window_await_working(apsmpi_send_window *w, MPI_Request *req, int blocking, int *rc,
                                     int (*work)(void *arg, int *rc), void *arg);
/* Empties the queue (blocking: waiting for sends in flight; else as far as it goes). 1 when it
 * is empty or *rc holds an error; 0 when progress must return. */
int apsmpi_send_window_flush(apsmpi_send_window *w, int blocking, int *rc);

#endif
