import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * VThreads: virtual threads (JDK 21 and later) for
 * tests/integration/test_vthreads.c.
 *
 *   java VThreads cpu N     N virtual threads named vt-0, vt-1, ..., each
 *                           forever (VThreads.work):
 *                           five units of
 *                           work in VThreads.five, three in VThreads.three,
 *                           two in VThreads.two (a unit: the same loop in
 *                           VThreads.unit), then Thread.yield(), which
 *                           unmounts it and lets the next one run. CPU
 *                           shares 50/30/20 among the three methods.
 *
 *   java VThreads pinned MS LIB
 *                           one virtual thread, forever: VThreads.viaNative
 *                           (LIB, tests/workloads/jni/vthreadsjni.c) calls
 *                           back VThreads.sleepPinned, which sleeps MS ms:
 *                           a native frame on its stack pins it, so its
 *                           carrier sleeps with it. Truth: "pinned_ns N",
 *                           the time it spent in viaNative.
 *
 * Virtual threads are made through reflection (Thread.ofVirtual), so that
 * this compiles with the other workloads for Java 17; on JDK 17 it exits
 * with status 3. "ready" once every virtual thread has started, then "alive N"
 * heartbeats from a platform thread; the truth at the stop: "rounds N"
 * (rounds of ten units done), "virtual_threads N".
 */
final class VThreads {
	/* Iterations of a unit: some 20 µs of work. */
	private static final int UNIT = 20_000;

	static volatile long sink;

	private VThreads() {
	}

	static long unit(long seed) {
		long x = seed;

		for (int i = 0; i < UNIT; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long five(long x) {
		for (int i = 0; i < 5; i++)
			x = unit(x);
		return x;
	}

	static long three(long x) {
		for (int i = 0; i < 3; i++)
			x = unit(x);
		return x;
	}

	static long two(long x) {
		for (int i = 0; i < 2; i++)
			x = unit(x);
		return x;
	}

	static native void viaNative(long ms);

	static void sleepPinned(long ms) throws InterruptedException {
		Thread.sleep(ms);
	}

	/* A virtual thread running body, started (Thread.ofVirtual().start(body)). */
	static Thread startVirtual(Runnable body) throws ReflectiveOperationException {
		return startVirtual(Thread.class.getMethod("ofVirtual").invoke(null), body);
	}

	/* The same from a Thread.Builder. */
	static Thread startVirtual(Object builder, Runnable body) throws ReflectiveOperationException {
		Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);

		return (Thread) start.invoke(builder, body);
	}

	/*
	 * What each virtual thread of the cpu mode runs, once all have started
	 * (go): a yielded virtual thread goes back to its carrier's own queue,
	 * ahead of those still to start, which would wait for a long while.
	 */
	static void work(long seed, CountDownLatch running, CountDownLatch go, AtomicLong rounds) {
		long x = seed;

		running.countDown();
		try {
			go.await();
		} catch (InterruptedException e) {
			return;
		}
		for (;;) {
			x = two(three(five(x)));
			sink = x;
			rounds.incrementAndGet();
			Thread.yield();
		}
	}

	/* The pinned mode: one virtual thread sleeping in sleepPinned under viaNative, ms at a time. */
	static void pinned(long ms, String lib) throws Exception {
		AtomicLong pinnedNs = new AtomicLong();
		CountDownLatch running = new CountDownLatch(1);

		System.load(lib);
		Workload.onStop(() -> Map.of("pinned_ns", pinnedNs.get()));
		startVirtual(() -> {
			running.countDown();
			for (;;) {
				long start = System.nanoTime();

				viaNative(ms);
				pinnedNs.addAndGet(System.nanoTime() - start);
			}
		});
		running.await();
		Workload.ready();
		Workload.heartbeat();
	}

	public static void main(String[] args) throws Exception {
		String usage = "java VThreads cpu N | pinned MS LIB";
		AtomicLong rounds = new AtomicLong();

		try {
			Thread.class.getMethod("ofVirtual");
		} catch (NoSuchMethodException e) {
			System.err.println("no virtual threads in this JVM");
			System.exit(3);
		}
		if (args.length == 3 && args[0].equals("pinned")) {
			pinned(Workload.positiveArg(usage, args[1]), args[2]);
			return;
		}
		if (args.length != 2 || !args[0].equals("cpu")) {
			System.err.println("usage: " + usage);
			System.exit(2);
		}
		int n = Workload.positiveArg(usage, args[1]);
		CountDownLatch running = new CountDownLatch(n), go = new CountDownLatch(1);
		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("rounds", rounds.get());
			truth.put("virtual_threads", (long) n);
			return truth;
		});
		/* Named vt-0, vt-1, ...: Thread.ofVirtual().name("vt-", 0). */
		Object named = Class.forName("java.lang.Thread$Builder").getMethod("name", String.class, long.class)
			.invoke(Thread.class.getMethod("ofVirtual").invoke(null), "vt-", 0L);
		for (int i = 0; i < n; i++) {
			long seed = i;
			startVirtual(named, () -> work(seed, running, go, rounds));
		}
		running.await();
		go.countDown();
		Workload.ready();
		Workload.heartbeat();
	}
}
