import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/*
 * SyscallWaits: JVM threads that spend their time in blocking system calls
 * made by native code (tests/workloads/jni/syscallwaits.c), which counts
 * every call a signal cut short. For the rule that a profiling signal never
 * interrupts a system call (tests/integration/test_syscall_waits.c).
 *
 *   java SyscallWaits LIBRARY      (the absolute path of libsyscallwaits.so)
 *
 * Threads: "sleeper" (nanosleep of 200 us, forever), "piperead" (read() of
 * one byte from a pipe, forever), "pipewrite" (one byte into that pipe every
 * 200 us), and the main thread's heartbeat, "alive N" every 100 ms. It
 * prints "ready" once they run, and on SIGTERM the truth:
 *
 *   sleeps N, sleep_eintr N, short_sleeps N     nanosleep calls completed,
 *                    returned EINTR, returned 0 before their time
 *   reads N, read_eintr N                       reads of a byte, reads that
 *                    returned EINTR
 *   writes N                                    bytes written
 *   handlers_unrestarted N                      real-time signal handlers the
 *                    reader took SA_RESTART off (see the library)
 */
public final class SyscallWaits {
	private static final long PERIOD_NS = 200_000;
	private static final String[] NAMES = { "sleeps", "sleep_eintr", "short_sleeps", "reads", "read_eintr", "writes",
			"handlers_unrestarted" };

	private SyscallWaits() {
	}

	static native void sleepLoop(long ns);

	static native void readLoop();

	static native void writeLoop(long ns);

	static native long[] counts();

	public static void main(String[] args) throws InterruptedException {
		if (args.length != 1) {
			System.err.println("usage: java SyscallWaits LIBRARY");
			System.exit(2);
		}
		System.load(args[0]);
		CountDownLatch running = new CountDownLatch(3);

		Workload.onStop(() -> {
			long[] counts = counts();
			Map<String, Long> truth = new LinkedHashMap<>();
			for (int i = 0; i < NAMES.length; i++)
				truth.put(NAMES[i], counts[i]);
			return truth;
		});
		Workload.start("sleeper", running, () -> sleepLoop(PERIOD_NS));
		Workload.start("piperead", running, SyscallWaits::readLoop);
		Workload.start("pipewrite", running, () -> writeLoop(PERIOD_NS));
		running.await();
		Workload.ready();
		Workload.heartbeat();
	}
}
