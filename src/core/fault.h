/* fault.h: fault injection for tests (APSMPI_TEST_FAIL=SITE:RANK:CALL): a named step fails on one rank at its CALL-th pass. */
#ifndef APSMPI_FAULT_H
#define APSMPI_FAULT_H

/* The steps that can be made to fail, X(enum name, name in APSMPI_TEST_FAIL, what fails). */
#define APSMPI_FAULT_SITES(X)                                                               \
    X(CODEC, "codec", "creating the codec at MPI_Init")                                     \
    X(SUMOP, "sumop", "creating the ring's sum op at MPI_Init")                             \
    X(KEYVAL, "keyval", "creating the private communicators' keyval at MPI_Init")           \
    X(DUP_MALLOC, "dup_malloc", "the allocation of a private communicator's handle")        \
    X(DUP_ATTR, "dup_attr", "caching a private communicator on the job's communicator")     \
    X(AGREE_ALLOC, "agree_alloc", "the memory of a call's agreement (the job ends)")        \
    X(AGREE, "agree", "the reduction that agrees on a call's scales")                       \
    X(RING_SEND, "ring_send", "posting a message of the pipelined ring")                    \
    X(RSAG_SEND, "rsag_send", "posting a message of rsag")                                  \
    X(DEVICE_SETUP, "device_setup", "setting up a thread's GPU streams, events and memory") \
    X(DEVICE_ALLOC, "device_alloc", "a GPU or page-locked buffer of a call")                \
    X(DEVICE_OP, "device_op", "a GPU operation of a call (kernel, copy, synchronisation)")

enum apsmpi_fault_site {
#define APSMPI_FAULT_ENUM(id, name, what) APSMPI_FAULT_##id,
    APSMPI_FAULT_SITES(APSMPI_FAULT_ENUM)
#undef APSMPI_FAULT_ENUM
        APSMPI_FAULT_NSITES
};

/* The valid values of APSMPI_TEST_FAIL, for its error. */
#define APSMPI_FAULT_VALID                                                                                    \
    "SITE:RANK:CALL, SITE one of codec, sumop, keyval, dup_malloc, dup_attr, agree_alloc, agree, ring_send, " \
    "rsag_send, device_setup, device_alloc, device_op, RANK a number or *"

/* Parses SITE:RANK:CALL (RANK a world rank, or * for every rank: -1; CALL counted from 1);
 * 0, or -1 if not valid. */
int apsmpi_fault_parse(const char *spec, int *site, long *rank, long *call);

/* Arms the fault of spec (NULL: none) for this process, world rank `rank`. */
void apsmpi_fault_arm(const char *spec, int rank);

/* 1 if this pass of `site` is to fail (the armed site, rank and pass), else 0. Thread-safe. */
int apsmpi_fault(enum apsmpi_fault_site site);

#endif
