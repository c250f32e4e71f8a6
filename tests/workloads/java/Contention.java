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
 *   java Contention -g GOFILE -r ROUNDS
 *
 * A monitor: "gate-holder" holds the monitor of a Contention$Gate for
 * about 5 ms at a time, spinning (Contention.holdGate); "gate-taker"
 * enters it (Contention.enterGate). A java.util.concurrent lock:
 * "lock-holder" holds a ReentrantLock for about 5 ms at a time, sleeping
 * (Contention.holdLock); "lock-taker" takes it (Contention.takeLock).
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
 * is the time off CPU, which the scheduler sees: the same on any machine,
 * where the spin's share grows with the machine's slowness (a kernel
 * under emulation).
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

	static void holdGate() throws InterruptedException {
		for (;;) {
			synchronized (GATE) {
				spin(5_000_000);
			}
			Thread.sleep(1);
		}
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
		String usage = "java Contention -g GOFILE -r ROUNDS";

		if (args.length != 4 || !args[0].equals("-g") || !args[2].equals("-r")) {
			System.err.println("usage: " + usage);
			System.exit(2);
		}
		Path go = Path.of(args[1]);
		int rounds = Workload.positiveArg(usage, args[3]);
		CountDownLatch running = new CountDownLatch(7), done = new CountDownLatch(2);
		ExecutorService pool = Executors.newFixedThreadPool(2, r -> new Thread(r, "pool-" + r.hashCode()));

		((ThreadPoolExecutor) pool).prestartAllCoreThreads();
		Workload.start("gate-holder", running, Contention::holdGate);
		Workload.start("lock-holder", running, Contention::holdLock);
		Workload.start("sleeper", running, () -> {
			for (;;)
				Thread.sleep(10);
		});
		Workload.start("gate-taker", running, () -> {
			awaitGo(go);
			enterGate(rounds);
			done.countDown();
		});
		Workload.start("lock-taker", running, () -> {
			awaitGo(go);
			takeLock(rounds);
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
