/* ratelimit.h: at most `burst` log lines per window of `window_s` seconds;
 * the rest are counted so that one summary line can say how many were left
 * out. Pure (the caller passes the time), so it is unit-testable. */
#ifndef SHOAL_UTIL_RATELIMIT_H
#define SHOAL_UTIL_RATELIMIT_H

struct shoal_ratelimit {
    double window_s;
    unsigned burst;
    double start;        /* when the current window began; < 0: none */
    unsigned logged;     /* lines logged in this window */
    unsigned suppressed; /* events left out in this window */
};

void shoal_ratelimit_init(struct shoal_ratelimit *rl, double window_s, unsigned burst);

/* An event at `now`: 1 when it may be logged, 0 when it is counted instead.
 * An event after the window ended starts a new window; *ended_suppressed
 * receives the count left out in the window that ended (0 if none): the
 * caller prints its summary first. */
int shoal_ratelimit_event(struct shoal_ratelimit *rl, double now, unsigned *ended_suppressed);

/* At the end of a window (or with force, at once): the count left out in
 * it, and the window is closed; 0 when there is nothing to report. */
unsigned shoal_ratelimit_flush(struct shoal_ratelimit *rl, double now, int force);

/* When the current window ends (to wake a poll loop), or -1 when no summary
 * is pending. */
double shoal_ratelimit_deadline(const struct shoal_ratelimit *rl);

#endif
