/* send_window.c: posting an algorithm's sends through its window, and waiting without stalling the window. */
#include "algo/send_window.h"

/* Posts one message of the call on its private communicator. */
static int post(apsmpi_send_window *w, const apsmpi_rsag_send *s)
{
    return PMPI_Isend(w->buf[s->result] + s->m.at, (int)s->m.bytes, MPI_BYTE, s->m.peer, w->tag_base + s->m.tag,
                      w->comm, &w->req[s->request]);
}

int apsmpi_send_window_pump(apsmpi_send_window *w)
{
    const apsmpi_rsag_send *s;
    int rc = MPI_SUCCESS;

    for (int i = w->q.in_flight - 1; rc == MPI_SUCCESS && i >= 0; i--) {
        int done = 0;
        rc = PMPI_Test(&w->req[w->q.flying[i]], &done, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && done)
            apsmpi_rsag_sendq_done(&w->q, i);
    }
    while (rc == MPI_SUCCESS && (s = apsmpi_rsag_sendq_next(&w->q)) != NULL)
        rc = post(w, s);
    return rc;
}

int apsmpi_send_window_send(apsmpi_send_window *w, apsmpi_rsag_send s)
{
    int rc = apsmpi_call_injected_error(w->c, APSMPI_FAULT_RSAG_SEND);

    if (rc != MPI_SUCCESS || w->q.window == 0)
        return rc != MPI_SUCCESS ? rc : post(w, &s);
    apsmpi_rsag_sendq_push(&w->q, s);
    return apsmpi_send_window_pump(w);
}

int apsmpi_send_window_wait_any(apsmpi_send_window *w, MPI_Request *req)
{
    MPI_Request a[1 + APSMPI_RSAG_MAX_WINDOW];
    int n = w->q.in_flight, idx, rc;

    a[0] = *req;
    for (int i = 0; i < n; i++)
        a[1 + i] = w->req[w->q.flying[i]];
    rc = PMPI_Waitany(n + 1, a, &idx, MPI_STATUS_IGNORE);
    *req = a[0];
    for (int i = 0; i < n; i++)
        w->req[w->q.flying[i]] = a[1 + i];
    return rc;
}

int apsmpi_send_window_wait(apsmpi_send_window *w, MPI_Request *req)
{
    int rc = MPI_SUCCESS;

    while (rc == MPI_SUCCESS && apsmpi_rsag_sendq_waiting(&w->q)) {
        rc = apsmpi_send_window_wait_any(w, req);
        if (rc == MPI_SUCCESS)
            rc = apsmpi_send_window_pump(w);
        if (*req == MPI_REQUEST_NULL)
            return rc;
    }
    return rc == MPI_SUCCESS ? PMPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

int apsmpi_send_window_await(apsmpi_send_window *w, MPI_Request *req, int blocking, int *rc)
{
    int done = 0;

    if (blocking) {
        *rc = apsmpi_send_window_wait(w, req);
        return 1;
    }
    *rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (*rc == MPI_SUCCESS && !done)
        *rc = apsmpi_send_window_pump(w);
    return *rc != MPI_SUCCESS || done;
}

int apsmpi_send_window_await_working(apsmpi_send_window *w, MPI_Request *req, int blocking, int *rc,
                                     int (*work)(void *arg, int *rc), void *arg)
{
    int done = 0;
    for (;;) {
        if (*rc == MPI_SUCCESS)
            *rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (*rc == MPI_SUCCESS && !done)
            *rc = apsmpi_send_window_pump(w);
        if (*rc != MPI_SUCCESS || done)
            return 1;
        if (!work(arg, rc)) {
            if (*rc != MPI_SUCCESS)
                return 1;
            if (!blocking)
                return 0;
            *rc = apsmpi_send_window_wait(w, req);
            return 1;
        }
    }
}

int apsmpi_send_window_flush(apsmpi_send_window *w, int blocking, int *rc)
{
    while (*rc == MPI_SUCCESS && apsmpi_rsag_sendq_waiting(&w->q)) {
        MPI_Request none = MPI_REQUEST_NULL;
        if (blocking)
            *rc = apsmpi_send_window_wait_any(w, &none);
        if (*rc == MPI_SUCCESS)
            *rc = apsmpi_send_window_pump(w);
        if (*rc == MPI_SUCCESS && !blocking && apsmpi_rsag_sendq_waiting(&w->q))
            return 0;
    }
    return 1;
}
