import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/*
 * WallWorkload: one thread per way a Java thread spends wall-clock time, for
 * the wall-clock mode (-e wall). Each thread has its own name and spends its
 * time in a method of its own, so a profile with --threads tells them apart:
 *
 *   thread    method                    what it does, forever
 *   spinner   WallWorkload.spinLoop     computes: on a CPU or waiting for one
 *   sleeper   WallWorkload.sleepLoop    Thread.sleep(200)
 *   waiter    WallWorkload.waitLoop     Object.wait(300) on a monitor nobody notifies
 *   parker    WallWorkload.parkLoop     LockSupport.parkNanos(250 ms)
 *   reader    WallWorkload.readLoop     read(2) on a local TCP socket whose peer never
 *                                       writes: one call that never returns
 *   holder    WallWorkload.holdLoop     Thread.sleep(300) inside synchronized (LOCK),
 *                                       released for an instant between sleeps
 *   monitor   WallWorkload.monitorLoop  enters synchronized (LOCK), blocked on holder;
 *                                       once in, leaves and waits for holder to take it again
 *
 *   java WallWorkload
 *
 * It prints "tid <tid> <name>" for each of these threads (the kernel's tid,
 * read from /proc/thread-self), then "ready" once the spinner runs, the
 * reader is about to read, the monitor thread is blocked on the lock and the
 * others are about to start their first wait, and on SIGTERM the truth:
 *
 *   errors N        everything the threads saw that should not happen: an
 *                   exception (InterruptedException, IOException, ...), a
 *                   read that returned, a wait, park or sleep that ended
 *                   before its time (by System.nanoTime, CLOCK_MONOTONIC);
 *                   each one is also described on stderr when it happens
 *   sleeps N        the sleeper's completed Thread.sleep(200) calls, and
 *   elapsed_ms M    the time since its first one began: a sleep cut short
 *                   shows as N * 200 > M
 *   waits, parks, holds, entries   completed waits, parks, holder sleeps and
 *                   monitor entries (the monitor thread gets the lock between
 *                   two of holder's sleeps, or not at all: the lock is not fair)
 *
 * The kernel names these threads after their Java names (HotSpot sets them,
 * 15 characters at most), and so does the profiler's --threads frame.
 */
public final class WallWorkload {
	private static final long SLEEP_MS = 200, WAIT_MS = 300, PARK_MS = 250, HOLD_MS = 300;
	/* A wait that ends this much before its time counts as early: more than clock rounding. */
	private static final long EARLY_SLACK_NS = 1_000_000;

	private static final AtomicLong errors = new AtomicLong();
	private static final AtomicLong sleeps = new AtomicLong(), waits = new AtomicLong(), parks = new AtomicLong(),
			holds = new AtomicLong(), entries = new AtomicLong();
	private static volatile long sleepStartNs, sink;
	/* How many times holder has taken LOCK; written under LOCK, read by the monitor thread outside it. */
	private static volatile long holdGeneration;
	private static final Object LOCK = new Object();

	/* Both ends of the reader's connection and the listener: referenced, so no cleaner closes them. */
	private static ServerSocket listener;
	private static Socket quiet, readEnd;
	/* Each thread's kernel tid, by name, recorded by the thread itself before it starts its work. */
	private static final Map<String, String> tids = new ConcurrentHashMap<>();

	private WallWorkload() {
	}

	private static void error(String what) {
		errors.incrementAndGet();
		System.err.println("WallWorkload: " + Thread.currentThread().getName() + ": " + what);
		System.err.flush();
	}

	/* Counts an early end: the call began at startNs and should have lasted ms. */
	private static void checkDuration(String what, long startNs, long ms) {
		long took = System.nanoTime() - startNs;

		if (took < TimeUnit.MILLISECONDS.toNanos(ms) - EARLY_SLACK_NS)
			error(what + " returned after " + took / 1000 + " us, not " + ms + " ms");
	}

	/* murmur3's 64-bit finaliser, forever, without allocating. */
	static void spinLoop(CountDownLatch started) {
		long x = System.nanoTime();

		started.countDown();
		for (;;) {
			for (int i = 0; i < 1 << 20; i++) {
				x ^= x >>> 33;
				x *= 0xff51afd7ed558ccdL;
				x ^= x >>> 33;
				x *= 0xc4ceb9fe1a85ec53L;
				x ^= x >>> 33;
			}
			sink = x;
		}
	}

	static void sleepLoop(CountDownLatch started) {
		sleepStartNs = System.nanoTime();
		started.countDown();
		for (;;) {
			long start = System.nanoTime();

			try {
				Thread.sleep(SLEEP_MS);
			} catch (InterruptedException e) {
				error("Thread.sleep: " + e);
				continue;
			}
			checkDuration("Thread.sleep", start, SLEEP_MS);
			sleeps.incrementAndGet();
		}
	}

	static void waitLoop(CountDownLatch started) {
		Object never = new Object();

		started.countDown();
		for (;;) {
			synchronized (never) {
				long start = System.nanoTime();

				try {
					never.wait(WAIT_MS);
				} catch (InterruptedException e) {
					error("Object.wait: " + e);
					continue;
				}
				checkDuration("Object.wait", start, WAIT_MS);
			}
			waits.incrementAndGet();
		}
	}

	static void parkLoop(CountDownLatch started) {
		started.countDown();
		for (;;) {
			long start = System.nanoTime();

			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PARK_MS));
			if (Thread.interrupted())
				error("LockSupport.parkNanos: interrupted");
			checkDuration("LockSupport.parkNanos", start, PARK_MS);
			parks.incrementAndGet();
		}
	}

	/*
	 * A blocking read of a socket whose peer never writes or closes: the
	 * socket has no timeout, so it stays in blocking mode and the read is
	 * one read(2) system call that never returns. If it does, with data, end
	 * of stream or an exception, that is an error.
	 */
	static void readLoop(InputStream in, CountDownLatch started) {
		byte[] buf = new byte[64];

		started.countDown();
		for (;;) {
			try {
				int n = in.read(buf);

				error("read returned " + n);
				if (n < 0)
					Thread.sleep(100);
			} catch (IOException | InterruptedException e) {
				error("read: " + e);
				try {
					Thread.sleep(100);
				} catch (InterruptedException again) {
					error("Thread.sleep after a failed read: " + again);
				}
			}
		}
	}

	/* Holds LOCK while it sleeps; between two sleeps it lets go for as long as it takes to loop. */
	static void holdLoop(CountDownLatch locked) {
		for (;;) {
			synchronized (LOCK) {
				holdGeneration++;
				locked.countDown();
				long start = System.nanoTime();

				try {
					Thread.sleep(HOLD_MS);
				} catch (InterruptedException e) {
					error("Thread.sleep holding the lock: " + e);
					continue;
				}
				checkDuration("Thread.sleep holding the lock", start, HOLD_MS);
			}
			holds.incrementAndGet();
		}
	}

	/*
	 * Enters LOCK and leaves it at once, again and again: nearly all its time
	 * is waiting to enter. After an entry it lets holder take the lock back
	 * before it tries again (the lock is not fair: it would win the race
	 * many thousand times in a row, and run instead of waiting).
	 */
	static void monitorLoop() {
		for (;;) {
			long generation;

			synchronized (LOCK) {
				entries.incrementAndGet();
				generation = holdGeneration;
			}
			while (holdGeneration == generation)
				Thread.yield();
		}
	}

	/* Notes the calling thread's tid: /proc/thread-self links to <pid>/task/<tid>. */
	private static void noteTid() {
		try {
			String tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
			tids.put(Thread.currentThread().getName(), tid);
		} catch (IOException e) {
			error("cannot read /proc/thread-self: " + e);
		}
	}

	private static Thread start(String name, Runnable body) {
		Thread t = new Thread(() -> {
			noteTid();
			body.run();
		}, name);

		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		if (args.length > 0) {
			System.err.println("usage: java WallWorkload");
			System.exit(2);
		}
		listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
		quiet = new Socket();
		quiet.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort()));
		readEnd = listener.accept();
		InputStream in = readEnd.getInputStream();

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			long n = sleeps.get();

			truth.put("errors", errors.get());
			truth.put("sleeps", n);
			truth.put("elapsed_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sleepStartNs));
			truth.put("waits", waits.get());
			truth.put("parks", parks.get());
			truth.put("holds", holds.get());
			truth.put("entries", entries.get());
			return truth;
		});

		CountDownLatch started = new CountDownLatch(6);
		start("spinner", () -> spinLoop(started));
		start("sleeper", () -> sleepLoop(started));
		start("waiter", () -> waitLoop(started));
		start("parker", () -> parkLoop(started));
		start("reader", () -> readLoop(in, started));
		start("holder", () -> holdLoop(started));
		started.await();
		/* holder has the lock: the monitor thread blocks on it. */
		Thread monitor = start("monitor", WallWorkload::monitorLoop);
		while (monitor.getState() != Thread.State.BLOCKED)
			Thread.onSpinWait();
		String[] names = { "spinner", "sleeper", "waiter", "parker", "reader", "holder", "monitor" };
		for (String name : names)
			System.out.println("tid " + tids.get(name) + " " + name);
		Workload.ready();
		for (;;)
			Thread.sleep(Long.MAX_VALUE);
	}
}
