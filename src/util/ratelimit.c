/* ratelimit.c: see ratelimit.h. */
#include "util/ratelimit.h"

void shoal_ratelimit_init(struct shoal_ratelimit *rl, double window_s, unsigned burst)
{
    rl->window_s = window_s;
    rl->burst = burst;
    rl->start = -1;
    rl->logged = rl->suppressed = 0;
}

unsigned shoal_ratelimit_flush(struct shoal_ratelimit *rl, double now, int force)
{
    unsigned n;
    if (rl->start < 0 || (!force && now < rl->start + rl->window_s)) return 0;
    n = rl->suppressed;
    rl->start = -1;
    rl->logged = rl->suppressed = 0;
    return n;
}

int shoal_ratelimit_event(struct shoal_ratelimit *rl, double now, unsigned *ended_suppressed)
{
    *ended_suppressed = shoal_ratelimit_flush(rl, now, 0);
    if (rl->start < 0) rl->start = now;
    if (rl->logged < rl->burst) {
        rl->logged++;
        return 1;
    }
    rl->suppressed++;
    return 0;
}

double shoal_ratelimit_deadline(const struct shoal_ratelimit *rl)
{
    return rl->start < 0 || rl->suppressed == 0 ? -1 : rl->start + rl->window_s;
}
