/*
 * syscall_heavy: spends most of its time in the kernel, reading /dev/zero in
 * large blocks from read_zero_blocks(), so a profile must show kernel frames
 * stacked above that user function. Prints "ready", runs until killed.
 *
 * The system call is made inline, not through libc's read(): libc is built
 * without frame pointers, and a frame-pointer walk that starts inside its
 * read() skips read()'s caller. This program tests the kernel/user join,
 * not that known limit of frame-pointer unwinding.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCK (1 << 20)

static long raw_read(int fd, char *buf, long len)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(0L /* SYS_read */), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return read(fd, buf, (size_t)len);
#endif
}

static void read_zero_blocks(int fd, char *buf)
{
	for (int i = 0; i < 64; i++)
		if (raw_read(fd, buf, BLOCK) != BLOCK)
			exit(1);
}

int main(void)
{
	char *buf = malloc(BLOCK);
	int fd = open("/dev/zero", O_RDONLY);

	if (!buf || fd < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		read_zero_blocks(fd, buf);
}
