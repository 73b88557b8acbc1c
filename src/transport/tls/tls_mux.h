/* tls_mux.h: two byte streams over one TCP connection.
 *
 * The encrypted transport opens one TLS stream per initiator and target,
 * so between two PEs that both send, each connection carries data one way
 * and its ACKs travel alone: 1.35x the time of one connection a message at
 * 2 namespace hosts (bench/tcp_floor.c, tcp_oneway_*). A mux carries both
 * PEs' streams of a pair over one connection, each as its own channel, so
 * either side's data carries the other side's ACKs. What each channel
 * carries (a TLS session) is not the mux's concern.
 *
 * On the wire, each write becomes frames: a 4-byte little-endian header
 * (bit 31 the channel, the rest the length, at most SHOAL_MUX_FRAME_MAX)
 * and that many bytes.
 *
 * Threads: one reader per channel at a time and any number of writers
 * (serialized inside). A reader takes what the socket holds, its own
 * channel's bytes for itself and the other channel's into that channel's
 * buffer, and wakes the other channel's reader if it sleeps. A writer whose
 * send would block takes in what arrives meanwhile, so two ends writing
 * large messages to each other never both block: each end's bytes are
 * taken in by the other's writer. */
#ifndef SHOAL_TRANSPORT_TLS_TLS_MUX_H
#define SHOAL_TRANSPORT_TLS_TLS_MUX_H

#include <stddef.h>
#include <sys/types.h>

#define SHOAL_MUX_FRAME_MAX ((size_t)1 << 20)

struct shoal_mux;

/* Takes fd (a connected stream socket; made non-blocking). NULL when out
 * of memory or descriptors (errno set); fd is then still the caller's. */
struct shoal_mux *shoal_mux_new(int fd);
/* Closes the socket and frees the mux: no thread may be using it. */
void shoal_mux_free(struct shoal_mux *m);
int shoal_mux_fd(const struct shoal_mux *m);
/* Reads up to len bytes of channel ch (0 or 1). With wait unset it returns
 * at once: -1 with errno EAGAIN when nothing is there. Otherwise it blocks
 * until some bytes come. Returns the bytes read, 0 once the connection has
 * ended and ch's buffer is empty, -1 with errno on a failure. */
ssize_t shoal_mux_read(struct shoal_mux *m, int ch, void *buf, size_t len, int wait);
/* Writes len bytes on channel ch, all of them, blocking while the socket is
 * full (and taking in what arrives meanwhile). 0, or -1 with errno (EPIPE
 * once a reader has seen the connection end). */
int shoal_mux_write(struct shoal_mux *m, int ch, const void *buf, size_t len);
/* Bytes of channel ch already taken in and not yet read. */
size_t shoal_mux_pending(struct shoal_mux *m, int ch);
/* Waits up to timeout_ms (-1: no limit) until channel ch has bytes or the
 * connection is over, taking in the other channel's bytes meanwhile (a
 * handshake on one channel must not end its wait for the other's
 * traffic). 1 then, 0 at the timeout. */
int shoal_mux_await(struct shoal_mux *m, int ch, int timeout_ms);
/* For a thread that sleeps on other descriptors too: returns the eventfd
 * that another thread's taking in bytes of ch will make readable (and marks
 * ch's reader asleep), or -1 when ch has bytes or the connection is over
 * (nothing to sleep for). *socket_too says whether the sleep must watch the
 * socket as well: not while the other channel's reader reads through a
 * message (below), which takes in ch's bytes and wakes it, and wakes it
 * too when that read ends. shoal_mux_sleep_end after the sleep, either way. */
int shoal_mux_sleep_begin(struct shoal_mux *m, int ch, int *socket_too);
void shoal_mux_sleep_end(struct shoal_mux *m, int ch);
/* Around a read of a whole message on ch that may block (a large answer):
 * meanwhile this reader takes in the other channel's bytes, so that
 * channel's sleeping reader need not watch the socket too, where each
 * segment of the message would wake it to take it in for nothing. */
void shoal_mux_reading_begin(struct shoal_mux *m, int ch);
void shoal_mux_reading_end(struct shoal_mux *m, int ch);
/* Whether the other channel's reader reads so now (a hint: sleeps decide
 * under the lock, shoal_mux_sleep_begin). */
int shoal_mux_other_reading(const struct shoal_mux *m, int ch);
/* Ends the connection both ways: readers and writers return (reads at the
 * end of what is buffered). */
void shoal_mux_shutdown(struct shoal_mux *m);

#endif
