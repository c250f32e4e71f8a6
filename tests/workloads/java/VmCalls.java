import java.util.concurrent.atomic.AtomicLong;

/*
 * VmCalls: Java threads that spend most of their time below compiled Java
 * code, in the JVM's own code or its stubs, where AsyncGetCallTrace gives up
 * unless a walk starts from the thread's last Java frame.
 *
 *   java VmCalls alloc|runtime [-t THREADS]
 *
 * alloc: VmCalls.allocate makes arrays too large for a thread's allocation
 * buffer (each one goes through the allocation slow path, _new_array_Java
 * then OptoRuntime::new_array_C, from compiled code) and small objects.
 *
 * runtime: VmCalls.copy copies large arrays with System.arraycopy (a stub
 * called from compiled code, with no frame anchor), VmCalls.hash takes
 * identity hashes of new objects (Object.hashCode, into the VM), and
 * VmCalls.intern interns new strings (String.intern, the VM's string table).
 *
 * Threads are named vm-0, vm-1, ... It prints "ready" once every thread runs,
 * "alive N" every 100 ms, and on SIGTERM the truth: "rounds N", the calls
 * made, summed over threads.
 */
public final class VmCalls {
	private static final String USAGE = "java VmCalls alloc|runtime [-t THREADS]";
	/* 256 KiB: larger than any TLAB refill leaves room for, so every one is a slow-path allocation. */
	private static final int BIG = 256 * 1024;
	private static final AtomicLong rounds = new AtomicLong();
	private static volatile Object sink;

	private VmCalls() {
	}

	/* Arrays and objects, each kept just long enough not to be optimised away. */
	static long allocate(Object[] keep, int round) {
		long sum = 0;

		for (int i = 0; i < keep.length; i++) {
			long[] big = new long[BIG / 8 + (round & 7)];
			big[i & 15] = round;
			keep[i] = big;
			keep[(i + 1) % keep.length] = new int[] { i, round };
			sum += big.length;
		}
		return sum;
	}

	static long copy(long[] from, long[] to) {
		for (int i = 0; i < 8; i++)
			System.arraycopy(from, i, to, 0, from.length - 8);
		return to[3];
	}

	static long hash(int n) {
		long sum = 0;

		for (int i = 0; i < n; i++) {
			Object o = new Object();
			sum += System.identityHashCode(o) + o.hashCode();
			sink = o;
		}
		return sum;
	}

	static long intern(int round, int n) {
		long sum = 0;

		for (int i = 0; i < n; i++)
			sum += ("vm-" + round + "-" + i).intern().length();
		return sum;
	}

	private static void allocLoop() {
		Object[] keep = new Object[64];

		for (int round = 0;; round++) {
			sink = allocate(keep, round);
			rounds.incrementAndGet();
		}
	}

	private static void runtimeLoop() {
		long[] from = new long[1 << 20], to = new long[1 << 20];

		for (int round = 0;; round++) {
			long v = copy(from, to) + hash(2000) + intern(round, 200);
			from[round & 1023] = v;
			rounds.incrementAndGet();
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 1 || !(args[0].equals("alloc") || args[0].equals("runtime")))
			throw new IllegalArgumentException(USAGE);
		boolean alloc = args[0].equals("alloc");
		Workload.runThreads("vm", Workload.threadsOption(USAGE, args, 1),
				    alloc ? VmCalls::allocLoop : VmCalls::runtimeLoop, rounds);
	}
}
