import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/*
 * Contention: threads that wait for locks in known ways, and threads that
 * wait for no lock, for tests/integration/test_locks.c (-e lock).
 *
 *   java Contention -g GOFILE -r ROUNDS [-h HOLD_MS] [-s]
 *
 * A monitor: "gate-holder" holds the monitor of a Contention$Gate for
 * HOLD_MS (5 by default) at a time, sleeping, or with -s spinning
 * (Contention.holdGate); "gate-taker" enters it (Contention.enterGate). A
 * java.util.concurrent lock: "lock-holder" holds a ReentrantLock for
 * HOLD_MS at a time, sleeping (Contention.holdLock); "lock-taker" takes
 * it (Contention.takeLock).
 * Each holder rests 1 ms between holds, each taker 1 ms after each take:
 * a taker waits for its holder, and for nothing else. Waiting for no
 * lock: a pool of two idle workers ("pool-*") and "sleeper"
 * (Thread.sleep, 10 ms at a time).
 *
 * The holders and the others run from the start; the takers warm their
 * clocks' reads up (before "ready"), then wait until GOFILE exists, take their lock ROUNDS times, measuring each wait
 * (System.nanoTime before and after the acquire), the time it ran in it
 * (its thread CPU clock: the spin before it parks, the JVM's own work
 * around the park) and the time it waited for a CPU in it (preempted, or
 * woken and not yet running: /proc/thread-self/schedstat's run-queue
 * time), both read just inside the two clock reads, and the time it slept
 * in it as the kernel counts it where it keeps scheduler statistics
 * (/proc/thread-self/sched); once both are done they print
 * "gate_waited_ns N", "gate_cpu_ns N", "gate_queued_ns N", "gate_slept_ns
 * N" (-1 without the kernel's count), the same four for "lock_", and
 * "elapsed_ns N" (from the first taker's start to
 * the last one's end), then "done"; the JVM then beats "alive N" until
 * stopped. The time the takers slept in their acquires (parked, until a
 * release woke them) is the kernel's count, or else waited less CPU and
 * queued (test_locks.c says when the two differ).
 *
 * A monitor's taker spins before it parks: HotSpot's adaptive spin, a
 * count of iterations that grows while spins succeed and shrinks while
 * they fail, and that gives up early on an owner it sees blocked (JDK 17).
 * On a slow machine (a kernel under emulation) a count spans milliseconds:
 * against 5 ms holds by a spinning holder the spin succeeds and the
 * taker's wait becomes its CPU time and the time it was preempted
 * spinning. Holders that sleep for tens of milliseconds (test_locks: 50)
 * make each spin fail, and most waits a park.
 */
final class Contention {
	static final class Gate {
	}

	private static final Gate GATE = new Gate();
	private static final ReentrantLock LOCK = new ReentrantLock();
	private static final AtomicLong gateWaited = new AtomicLong(), lockWaited = new AtomicLong(),
			gateCpu = new AtomicLong(), lockCpu = new AtomicLong(), gateQueued = new AtomicLong(),
			lockQueued = new AtomicLong(), gateSlept = new AtomicLong(), lockSlept = new AtomicLong(),
			startNs = new AtomicLong();
	/* Set when a thread's sched file had no sum_sleep_runtime: the *_slept_ns figures are then -1, not their sums. */
	private static volatile boolean noSleepFigures;
	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
	static volatile long sink;

	private Contention() {
	}

	static void spin(long ns) {
		long end = System.nanoTime() + ns;

		while (System.nanoTime() < end)
			sink++;
	}

	static void holdGate(int holdMs, boolean spinning) throws InterruptedException {
		for (;;) {
			synchronized (GATE) {
				if (spinning)
					spin(holdMs * 1_000_000L);
				else
					Thread.sleep(holdMs);
			}
			Thread.sleep(1);
		}
	}

	static void holdLock(int holdMs) throws InterruptedException {
		for (;;) {
			LOCK.lock();
			try {
				Thread.sleep(holdMs);
			} finally {
				LOCK.unlock();
			}
			Thread.sleep(1);
		}
	}

	/*
	 * The calling thread's time on a CPU, to the nanosecond (its CPU clock),
	 * and waiting on a run queue (the kernel's schedstat, whose run-queue
	 * count is whole whenever the thread runs, where its CPU count lags by
	 * the thread's time on the CPU since the scheduler last looked). The
	 * file is the thread's own, open from the start and read in place into
	 * the thread's own buffer: nothing allocated, little run, since all of
	 * it lies inside the acquire measured (on a slow machine, reading it
	 * through Files.readString ran for milliseconds and collected garbage
	 * that stopped the takers). At the end of an acquire (atEnd) the file
	 * is read before the CPU clock, so that its cost is in the CPU time
	 * measured.
	 */
	static final class Schedstat {
		private static final byte[] SLEPT = "sum_sleep_runtime".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
		private final FileChannel file, sched;
		private final ByteBuffer buffer = ByteBuffer.allocate(128), schedBuffer = ByteBuffer.allocate(16384);

		Schedstat() throws IOException {
			file = FileChannel.open(Path.of("/proc/thread-self/schedstat"), StandardOpenOption.READ);
			sched = FileChannel.open(Path.of("/proc/thread-self/sched"), StandardOpenOption.READ);
		}

		/*
		 * The kernel's own count of the time the thread slept, where it
		 * keeps scheduler statistics (kernel.sched_schedstats=1):
		 * /proc/thread-self/sched's sum_sleep_runtime ("ms.nnnnnn", the
		 * sleeps interruptible or not, each added when it ends). -1 where
		 * the file has no such line, and from then on without reading it.
		 */
		long slept() throws IOException {
			int end, at = 0;
			long ms = 0, frac = 0;

			if (noSleepFigures)
				return -1;
			schedBuffer.clear();
			while (sched.read(schedBuffer, schedBuffer.position()) > 0 && schedBuffer.hasRemaining())
				;
			end = schedBuffer.position();
			for (;; at++) {
				int k = 0;

				if (at + SLEPT.length > end) {
					noSleepFigures = true;
					return -1;
				}
				while (k < SLEPT.length && schedBuffer.get(at + k) == SLEPT[k])
					k++;
				if (k == SLEPT.length)
					break;
			}
			for (at += SLEPT.length; at < end && schedBuffer.get(at) != '.' && schedBuffer.get(at) != '\n'; at++) {
				byte c = schedBuffer.get(at);

				if (c >= '0' && c <= '9')
					ms = ms * 10 + (c - '0');
			}
			for (int digits = 0; digits < 6; digits++) {
				byte c = ++at < end ? schedBuffer.get(at) : (byte)'0';

				frac = frac * 10 + (c >= '0' && c <= '9' ? c - '0' : 0);
			}
			return ms * 1_000_000L + frac;
		}

		/* The second field of the file: ns waiting on a run queue. */
		private long queued() throws IOException {
			long value = 0;
			int at = 0, field = 0;

			buffer.clear();
			while (file.read(buffer, buffer.position()) > 0 && buffer.hasRemaining())
				;
			for (; at < buffer.position() && field < 2; at++) {
				byte c = buffer.get(at);

				if (c == ' ')
					field++;
				else if (field == 1)
					value = value * 10 + (c - '0');
			}
			return value;
		}

		/* into: CPU time, run-queue time, time slept (slept(); inside the other two, which it does not need). */
		void read(long[] into, boolean atEnd) throws IOException {
			if (atEnd) {
				into[2] = slept();
				into[1] = queued();
				into[0] = THREADS.getCurrentThreadCpuTime();
			} else {
				into[0] = THREADS.getCurrentThreadCpuTime();
				into[1] = queued();
				into[2] = slept();
			}
		}

		/*
		 * The reads' first calls load and initialise classes, ask for
		 * compilations and build profiles, each of which can wait on the
		 * JVM's own locks: done before the takers measure anything, or
		 * those waits are in the acquires' time and in no lock's (under
		 * emulation, where the interpreter is slow, 15% of the takers'
		 * time off CPU). WARM_READS is past the JIT's thresholds.
		 */
		void warmUp() throws IOException {
			long[] into = new long[3];

			for (int i = 0; i < WARM_READS; i++) {
				read(into, (i & 1) != 0);
				sink += System.nanoTime() - into[0];
			}
		}
	}

	private static final int WARM_READS = 20_000;

	static void enterGate(int rounds, Schedstat stat) throws InterruptedException, IOException {
		long[] statBefore = new long[3], statAfter = new long[3];

		for (int i = 0; i < rounds; i++) {
			long before = System.nanoTime();

			stat.read(statBefore, false);
			synchronized (GATE) {
				stat.read(statAfter, true);

				gateCpu.addAndGet(statAfter[0] - statBefore[0]);
				gateQueued.addAndGet(statAfter[1] - statBefore[1]);
				gateSlept.addAndGet(statAfter[2] - statBefore[2]);
				gateWaited.addAndGet(System.nanoTime() - before);
				sink++;
			}
			Thread.sleep(1);
		}
	}

	static void takeLock(int rounds, Schedstat stat) throws InterruptedException, IOException {
		long[] statBefore = new long[3], statAfter = new long[3];

		for (int i = 0; i < rounds; i++) {
			long before = System.nanoTime();

			stat.read(statBefore, false);
			LOCK.lock();
			try {
				stat.read(statAfter, true);

				lockCpu.addAndGet(statAfter[0] - statBefore[0]);
				lockQueued.addAndGet(statAfter[1] - statBefore[1]);
				lockSlept.addAndGet(statAfter[2] - statBefore[2]);
				lockWaited.addAndGet(System.nanoTime() - before);
				sink++;
			} finally {
				LOCK.unlock();
			}
			Thread.sleep(1);
		}
	}

	public static void main(String[] args) throws Exception {
		String usage = "java Contention -g GOFILE -r ROUNDS [-h HOLD_MS] [-s]";
		Path go = null;
		int rounds = 0, hold = 5;
		boolean spinning = false;

		for (int i = 0; i < args.length; i++) {
			String flag = args[i];

			if (flag.equals("-s")) {
				spinning = true;
				continue;
			}
			if (i + 1 >= args.length || !(flag.equals("-g") || flag.equals("-r") || flag.equals("-h"))) {
				go = null;
				break;
			}
			String value = args[++i];
			if (flag.equals("-g"))
				go = Path.of(value);
			else if (flag.equals("-r"))
				rounds = Workload.positiveArg(usage, value);
			else
				hold = Workload.positiveArg(usage, value);
		}
		if (go == null || rounds == 0) {
			System.err.println("usage: " + usage);
			System.exit(2);
		}
		final Path goFile = go;
		final int takes = rounds, holdMs = hold;
		final boolean spinHolding = spinning;
		CountDownLatch running = new CountDownLatch(7), warmed = new CountDownLatch(2), done = new CountDownLatch(2);
		ExecutorService pool = Executors.newFixedThreadPool(2, r -> new Thread(r, "pool-" + r.hashCode()));

		((ThreadPoolExecutor) pool).prestartAllCoreThreads();
		Workload.start("gate-holder", running, () -> holdGate(holdMs, spinHolding));
		Workload.start("lock-holder", running, () -> holdLock(holdMs));
		Workload.start("sleeper", running, () -> {
			for (;;)
				Thread.sleep(10);
		});
		Workload.start("gate-taker", running, () -> {
			Schedstat stat = new Schedstat();

			stat.warmUp();
			warmed.countDown();
			awaitGo(goFile);
			enterGate(takes, stat);
			done.countDown();
		});
		Workload.start("lock-taker", running, () -> {
			Schedstat stat = new Schedstat();

			stat.warmUp();
			warmed.countDown();
			awaitGo(goFile);
			takeLock(takes, stat);
			done.countDown();
		});
		/* The pool's two threads are running too, idle. */
		running.countDown();
		running.countDown();
		running.await();
		warmed.await();
		Workload.ready();
		new Thread(() -> {
			try {
				done.await();
			} catch (InterruptedException e) {
				return;
			}
			System.out.println("gate_waited_ns " + gateWaited.get());
			System.out.println("gate_cpu_ns " + gateCpu.get());
			System.out.println("gate_queued_ns " + gateQueued.get());
			System.out.println("gate_slept_ns " + (noSleepFigures ? -1 : gateSlept.get()));
			System.out.println("lock_waited_ns " + lockWaited.get());
			System.out.println("lock_cpu_ns " + lockCpu.get());
			System.out.println("lock_queued_ns " + lockQueued.get());
			System.out.println("lock_slept_ns " + (noSleepFigures ? -1 : lockSlept.get()));
			System.out.println("elapsed_ns " + (System.nanoTime() - startNs.get()));
			System.out.println("done");
			System.out.flush();
		}, "reporter").start();
		Workload.heartbeat();
	}

	private static void awaitGo(Path go) throws InterruptedException {
		while (!Files.exists(go))
			Thread.sleep(5);
		startNs.compareAndSet(0, System.nanoTime());
	}
}
