/* floor_net.h: the one TCP connection of the floor probes (tcp_floor.c,
 * stream_floor.c), both ends on 127.0.0.1 or one in each of two network
 * namespace hosts. Each returns -1 (errno set) where it fails; the probe
 * says what failed. */
#ifndef SHOAL_BENCH_FLOOR_NET_H
#define SHOAL_BENCH_FLOOR_NET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* Listens on port, or on a free port of 127.0.0.1 when port is 0; *addr is
 * where to connect. A port is given inside a namespace host, whose own
 * address is the one to take. */
static inline int floor_listen(int port, struct sockaddr_in *addr)
{
    const int one = 1;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) return -1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(port ? INADDR_ANY : INADDR_LOOPBACK)};
    socklen_t len = sizeof *addr;
    if (bind(ls, (struct sockaddr *)addr, len) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)addr, &len)) {
        close(ls);
        return -1;
    }
    return ls;
}

/* Connects, retrying for 5 s: the listener may start later. */
static inline int floor_connect(const struct sockaddr_in *addr)
{
    for (int tries = 0; tries < 500; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return -1;
        if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) == 0) return fd;
        close(fd);
        usleep(10000);
    }
    return -1;
}

/* The listener's address from the command line (--connect ADDR PORT). */
static inline int floor_peer(const char *ip, const char *port, struct sockaddr_in *addr)
{
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    return inet_pton(AF_INET, ip, &addr->sin_addr) == 1 ? 0 : -1;
}

#endif
