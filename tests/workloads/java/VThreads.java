import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

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
 *   java VThreads waits GOFILE ROUNDS
 *                           virtual threads that wait in known ways, once
 *                           GOFILE exists, ROUNDS times each, measuring
 *                           every wait (System.nanoTime around it):
 *                           "vt-sleep-0" and "vt-sleep-1" sleep 10 ms in
 *                           VThreads.sleepWait; "vt-taker-0" and
 *                           "vt-taker-1" take a ReentrantLock in
 *                           VThreads.lockWait, which "vt-holder" holds
 *                           5 ms at a time (asleep) from the start;
 *                           "vt-reader-0" and "vt-reader-1" read a socket
 *                           in VThreads.socketWait, which a platform
 *                           thread ("writer") writes a byte to every
 *                           10 ms from GOFILE on. Each rests 1 ms between waits, in its
 *                           loop's method. Once all are done: the truth,
 *                           "sleep_waited_ns N", "lock_waited_ns N",
 *                           "socket_waited_ns N", then "done".
 *
 *   java VThreads yields N  N virtual threads that do nothing but yield
 *                           (Thread.yield), forever: each yield unmounts
 *                           one and mounts it again. "alive N" heartbeats,
 *                           and "yields N", the count so far, every 500 ms
 *                           (bench/vthread_park_cost.sh).
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

	private static final ReentrantLock LOCK = new ReentrantLock();
	private static final AtomicLong sleepWaited = new AtomicLong(), lockWaited = new AtomicLong(),
			socketWaited = new AtomicLong();

	static void sleepWait() throws InterruptedException {
		long before = System.nanoTime();

		Thread.sleep(10);
		sleepWaited.addAndGet(System.nanoTime() - before);
	}

	static void lockWait() {
		long before = System.nanoTime();

		LOCK.lock();
		lockWaited.addAndGet(System.nanoTime() - before);
		LOCK.unlock();
	}

	static void socketWait(InputStream in) throws Exception {
		long before = System.nanoTime();

		if (in.read() < 0)
			throw new IllegalStateException("the writer closed the socket");
		socketWaited.addAndGet(System.nanoTime() - before);
	}

	static void holdLock() throws InterruptedException {
		for (;;) {
			LOCK.lock();
			try {
				Thread.sleep(5);
			} finally {
				LOCK.unlock();
			}
			Thread.sleep(1);
		}
	}

	interface Round {
		void run() throws Exception;
	}

	/* A named virtual thread: after go, ROUNDS rounds of round, 1 ms apart; then done counts down. */
	static void waiter(String name, Path go, int rounds, Round round, CountDownLatch done)
			throws ReflectiveOperationException {
		Object builder = Class.forName("java.lang.Thread$Builder").getMethod("name", String.class)
			.invoke(Thread.class.getMethod("ofVirtual").invoke(null), name);

		startVirtual(builder, () -> {
			try {
				while (!Files.exists(go))
					Thread.sleep(5);
				for (int i = 0; i < rounds; i++) {
					round.run();
					Thread.sleep(1);
				}
				done.countDown();
			} catch (Throwable e) {
				System.err.println("virtual thread " + name + " failed:");
				e.printStackTrace();
				Runtime.getRuntime().halt(1);
			}
		});
	}

	/* The waits mode (see the header). */
	static void waits(Path go, int rounds) throws Exception {
		ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
		List<OutputStream> outs = new ArrayList<>();
		CountDownLatch done = new CountDownLatch(6);

		startVirtual(Class.forName("java.lang.Thread$Builder").getMethod("name", String.class)
			.invoke(Thread.class.getMethod("ofVirtual").invoke(null), "vt-holder"), () -> {
				try {
					holdLock();
				} catch (InterruptedException e) {
					Runtime.getRuntime().halt(1);
				}
			});
		for (int i = 0; i < 2; i++) {
			waiter("vt-sleep-" + i, go, rounds, VThreads::sleepWait, done);
			waiter("vt-taker-" + i, go, rounds, VThreads::lockWait, done);
			Socket socket = new Socket(server.getInetAddress(), server.getLocalPort());
			InputStream in = socket.getInputStream();
			outs.add(server.accept().getOutputStream());
			waiter("vt-reader-" + i, go, rounds, () -> socketWait(in), done);
		}
		Workload.start("writer", new CountDownLatch(1), () -> {
			while (!Files.exists(go))
				Thread.sleep(5);
			for (;;) {
				Thread.sleep(10);
				for (OutputStream out : outs)
					out.write(1);
			}
		});
		Workload.ready();
		new Thread(() -> {
			try {
				done.await();
			} catch (InterruptedException e) {
				return;
			}
			System.out.println("sleep_waited_ns " + sleepWaited.get());
			System.out.println("lock_waited_ns " + lockWaited.get());
			System.out.println("socket_waited_ns " + socketWaited.get());
			System.out.println("done");
			System.out.flush();
		}, "reporter").start();
		Workload.heartbeat();
	}

	/* The yields mode: n virtual threads that yield forever, counting. */
	static void yields(int n) throws Exception {
		AtomicLong count = new AtomicLong();
		CountDownLatch running = new CountDownLatch(n), go = new CountDownLatch(1);

		/* All started before any yields: a yielded one goes ahead of those still to start (see work). */
		for (int i = 0; i < n; i++) {
			startVirtual(() -> {
				running.countDown();
				try {
					go.await();
				} catch (InterruptedException e) {
					return;
				}
				for (;;) {
					Thread.yield();
					count.incrementAndGet();
				}
			});
		}
		running.await();
		go.countDown();
		Workload.ready();
		for (long beat = 1;; beat++) {
			Thread.sleep(100);
			System.out.println("alive " + beat);
			if (beat % 5 == 0)
				System.out.println("yields " + count.get());
			System.out.flush();
		}
	}

	public static void main(String[] args) throws Exception {
		String usage = "java VThreads cpu N | pinned MS LIB | waits GOFILE ROUNDS | yields N";
		AtomicLong rounds = new AtomicLong();

		try {
			Thread.class.getMethod("ofVirtual");
		} catch (NoSuchMethodException e) {
			System.err.println("no virtual threads in this JVM");
			System.exit(3);
		}
		if (args.length == 2 && args[0].equals("yields")) {
			yields(Workload.positiveArg(usage, args[1]));
			return;
		}
		if (args.length == 3 && args[0].equals("waits")) {
			waits(Path.of(args[1]), Workload.positiveArg(usage, args[2]));
			return;
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
