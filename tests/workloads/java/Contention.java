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
 * The holders and the others run from the start; the takers wait until
 * GOFILE exists, take their lock ROUNDS times, measuring each wait
 * (System.nanoTime before and after the acquire) and the CPU time the
 * taker used in it (its thread CPU clock: the spin before it parks, and
 * the JVM's own work around the park), and once both are done print
 * "gate_waited_ns N", "gate_cpu_ns N", "lock_waited_ns N", "lock_cpu_ns
 * N", "elapsed_ns N" (from the first taker's start to the last one's end),
 * then "done"; the JVM then beats "alive N" until stopped. Waited minus CPU
 * is the time off CPU, which the scheduler sees.
 *
 * A monitor's taker spins before it parks: HotSpot's adaptive spin, a
 * count of iterations that grows while spins succeed and shrinks while
 * they fail, and that gives up early on an owner it sees blocked (JDK 17;
 * an owner that holds a thin lock it cannot see). On a slow machine (a
 * kernel under emulation) a count spans milliseconds: against 5 ms holds
 * the spin succeeds, the taker's wait becomes its CPU time and the time
 * it was preempted spinning, and the time off CPU around the acquire
 * (preempted anywhere between the two clock reads) is no longer the
 * lock's. Holds long enough for every spin to fail (20 ms) bring the
 * count to nothing on any machine, and each wait to a park.
 */
final class Contention {
	static final class Gate {
	}

	private static final Gate GATE = new Gate();
	private static final ReentrantLock LOCK = new ReentrantLock();
	private static final AtomicLong gateWaited = new AtomicLong(), lockWaited = new AtomicLong(),
			gateCpu = new AtomicLong(), lockCpu = new AtomicLong(), startNs = new AtomicLong();
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

	static void enterGate(int rounds) throws InterruptedException {
		for (int i = 0; i < rounds; i++) {
			long before = System.nanoTime(), cpuBefore = THREADS.getCurrentThreadCpuTime();

			synchronized (GATE) {
				gateCpu.addAndGet(THREADS.getCurrentThreadCpuTime() - cpuBefore);
				gateWaited.addAndGet(System.nanoTime() - before);
				sink++;
			}
			Thread.sleep(1);
		}
	}

	static void takeLock(int rounds) throws InterruptedException {
		for (int i = 0; i < rounds; i++) {
			long before = System.nanoTime(), cpuBefore = THREADS.getCurrentThreadCpuTime();

			LOCK.lock();
			try {
				lockCpu.addAndGet(THREADS.getCurrentThreadCpuTime() - cpuBefore);
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
		CountDownLatch running = new CountDownLatch(7), done = new CountDownLatch(2);
		ExecutorService pool = Executors.newFixedThreadPool(2, r -> new Thread(r, "pool-" + r.hashCode()));

		((ThreadPoolExecutor) pool).prestartAllCoreThreads();
		Workload.start("gate-holder", running, () -> holdGate(holdMs, spinHolding));
		Workload.start("lock-holder", running, () -> holdLock(holdMs));
		Workload.start("sleeper", running, () -> {
			for (;;)
				Thread.sleep(10);
		});
		Workload.start("gate-taker", running, () -> {
			awaitGo(goFile);
			enterGate(takes);
			done.countDown();
		});
		Workload.start("lock-taker", running, () -> {
			awaitGo(goFile);
			takeLock(takes);
			done.countDown();
		});
		/* The pool's two threads are running too, idle. */
		running.countDown();
		running.countDown();
		running.await();
		Workload.ready();
		new Thread(() -> {
			try {
				done.await();
			} catch (InterruptedException e) {
				return;
			}
			System.out.println("gate_waited_ns " + gateWaited.get());
			System.out.println("gate_cpu_ns " + gateCpu.get());
			System.out.println("lock_waited_ns " + lockWaited.get());
			System.out.println("lock_cpu_ns " + lockCpu.get());
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
