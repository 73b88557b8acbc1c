/* status.h: the one status type used inside Shoal. Internal code returns a
 * status; only the public API layer decides to print and abort. */
#ifndef SHOAL_UTIL_STATUS_H
#define SHOAL_UTIL_STATUS_H

typedef enum shoal_status {
    SHOAL_OK = 0,
    SHOAL_ERR_NOMEM,    /* out of memory (private or symmetric) */
    SHOAL_ERR_INVAL,    /* bad argument */
    SHOAL_ERR_RANGE,    /* value outside its limit */
    SHOAL_ERR_SYS,      /* a system call failed; errno was logged */
    SHOAL_ERR_PROTO,    /* malformed bootstrap message */
    SHOAL_ERR_CLOSED,   /* the peer (launcher) went away */
    SHOAL_ERR_UNSUPPORTED
} shoal_status_t;

const char *shoal_status_str(shoal_status_t status);

#endif
