// SPDX-License-Identifier: GPL-2.0
/*
 * rrlat: TCP request/response latency, for the benchmark's part l.
 * Runs inside the VM.
 *
 *   rrlat -l PORT [-s SIZE]                  answer one client, then exit
 *   rrlat HOST PORT [-s SIZE] [-n COUNT] [-w WARMUP]
 *
 * The client sends SIZE octets (default 64) and waits for the server to
 * send them back, COUNT times (default 2000) after WARMUP unmeasured
 * round trips (default 200), on one connection with TCP_NODELAY.  Both
 * ends sleep in read(), as any socket application does.  It prints
 * one line: "rtt_us MEAN P50 P99 MIN COUNT", in microseconds from
 * CLOCK_MONOTONIC, and fails if an answer differs from its request.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void xfer(int fd, unsigned char *buf, size_t len, int out)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = out ? write(fd, buf + done, len - done) :
			  read(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(out ? "write" : "read");
		if (n == 0) {
			if (!out && done == 0)
				exit(0);	/* the client is done */
			fprintf(stderr, "rrlat: connection closed mid-message\n");
			exit(1);
		}
		done += n;
	}
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

static void serve(const char *port, size_t size, unsigned char *buf)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	int one = 1, ls, fd;

	sa.sin6_port = htons(atoi(port));
	ls = socket(AF_INET6, SOCK_STREAM, 0);
	if (ls < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("bind");
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept");
	nodelay(fd);
	for (;;) {
		xfer(fd, buf, size, 0);
		xfer(fd, buf, size, 1);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	unsigned long count = 2000, warm = 200, i;
	const char *listen_port = NULL;
	unsigned char *buf, *echo;
	double *rtt, t, sum = 0;
	size_t size = 64, j;
	int opt, fd;

	while ((opt = getopt(argc, argv, "l:s:n:w:")) != -1) {
		switch (opt) {
		case 'l':
			listen_port = optarg;
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			warm = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (size == 0 || count == 0)
		goto usage;
	buf = malloc(size);
	echo = malloc(size);
	rtt = calloc(count, sizeof(*rtt));
	if (!buf || !echo || !rtt)
		die("malloc");
	if (listen_port)
		serve(listen_port, size, buf);
	if (argc - optind != 2)
		goto usage;

	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &ai))
		die("getaddrinfo");
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
		die("connect");
	nodelay(fd);
	for (i = 0; i < warm + count; i++) {
		for (j = 0; j < size; j++)
			buf[j] = (unsigned char)(i + j);
		t = now_us();
		xfer(fd, buf, size, 1);
		xfer(fd, echo, size, 0);
		t = now_us() - t;
		if (memcmp(buf, echo, size)) {
			fprintf(stderr, "rrlat: answer %lu differs\n", i);
			return 1;
		}
		if (i >= warm)
			rtt[i - warm] = t;
	}
	close(fd);
	for (i = 0; i < count; i++)
		sum += rtt[i];
	qsort(rtt, count, sizeof(*rtt), cmp);
	printf("rtt_us %.1f %.1f %.1f %.1f %lu\n", sum / count,
	       rtt[count / 2], rtt[count * 99 / 100], rtt[0], count);
	return 0;

usage:
	fprintf(stderr,
		"usage: rrlat -l PORT [-s SIZE]\n"
		"       rrlat HOST PORT [-s SIZE] [-n COUNT] [-w WARMUP]\n");
	return 2;
}
