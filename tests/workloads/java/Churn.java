import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Churn: the day of an application server, compressed. Every part of the
 * JVM that a profiling signal can land in is kept busy at once:
 *
 *  - spawn-0, spawn-1: start threads that live well under a millisecond
 *    (allocate a little, throw and catch one exception, end), one after
 *    another. A signal then often lands on a thread being created or torn
 *    down: inside pthread_create's and the JVM's set-up, inside malloc,
 *    before the thread is attached to the JVM or after it left.
 *  - alloc: allocates short-lived garbage as fast as it can: young
 *    collections all the time, safepoints with them.
 *  - throw: throws exceptions from 200 frames deep and catches them at the
 *    top: every one fills in a deep stack trace.
 *  - plugin: loads StressPlugin into a new class loader, runs it (C2
 *    compiles, then deoptimises twice: see StressPlugin) and drops the
 *    loader, again and again.
 *  - collect: System.gc() every second, which unloads the dropped classes.
 *
 *   java Churn
 *
 * It runs until SIGTERM: "ready" once every thread runs, then "alive N"
 * every 50 ms from a heartbeat thread that, before each beat, starts and
 * joins a thread of its own and allocates: a beat needs thread creation,
 * allocation and so safepoints to work, not just the heartbeat thread.
 * On SIGTERM the truth: "threads_started N", "exceptions N",
 * "plugin_rounds N", "classes_unloaded N", "gc_count N", "allocated_mb N".
 * A thread that fails ends the JVM with status 1.
 */
public final class Churn {
	private static final long BEAT_MS = 50;
	private static final long PLUGIN_WARMUP_NS = 50_000_000L;
	private static final long GC_INTERVAL_MS = 1000;
	private static final int THROW_DEPTH = 200;

	private static final AtomicLong threadsStarted = new AtomicLong(), exceptions = new AtomicLong(),
			pluginRounds = new AtomicLong(), allocatedBytes = new AtomicLong();
	private static volatile Object sink;

	private Churn() {
	}

	/* Recurses depth frames, then throws. */
	static int deep(int depth) {
		if (depth == 0)
			throw new IllegalStateException("churn");
		return deep(depth - 1) + 1;
	}

	static void throwFrom(int depth) {
		try {
			sink = deep(depth);
		} catch (IllegalStateException e) {
			sink = e.getStackTrace();
			exceptions.incrementAndGet();
		}
	}

	/* What a short-lived thread does before it ends. */
	static void shortLife() {
		List<Object> garbage = new ArrayList<>();

		for (int i = 0; i < 16; i++)
			garbage.add(new long[i]);
		sink = garbage;
		throwFrom(8);
	}

	static void startAndJoin(String name) throws InterruptedException {
		Thread t = new Thread(Churn::shortLife, name);

		t.start();
		threadsStarted.incrementAndGet();
		t.join();
	}

	static void spawn() throws InterruptedException {
		for (;;)
			startAndJoin("short");
	}

	static void allocate() {
		for (;;) {
			List<Object> garbage = new ArrayList<>();
			long bytes = 0;

			for (int i = 0; i < 1000; i++) {
				long[] small = new long[i % 16];
				garbage.add(small);
				bytes += 16 + 8L * small.length;
			}
			sink = garbage;
			allocatedBytes.addAndGet(bytes);
		}
	}

	static void throwing() {
		for (;;)
			throwFrom(THROW_DEPTH);
	}

	static void plugins() throws Exception {
		Map<String, byte[]> classes = Stress.pluginClasses();

		for (;;) {
			Stress.pluginRound(classes, PLUGIN_WARMUP_NS);
			pluginRounds.incrementAndGet();
		}
	}

	public static void main(String[] args) throws Exception {
		CountDownLatch running = new CountDownLatch(6);

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			long gcs = 0;

			for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
				gcs += Math.max(0, gc.getCollectionCount());
			truth.put("threads_started", threadsStarted.get());
			truth.put("exceptions", exceptions.get());
			truth.put("plugin_rounds", pluginRounds.get());
			truth.put("classes_unloaded", ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
			truth.put("gc_count", gcs);
			truth.put("allocated_mb", allocatedBytes.get() >> 20);
			return truth;
		});
		Workload.start("spawn-0", running, Churn::spawn);
		Workload.start("spawn-1", running, Churn::spawn);
		Workload.start("alloc", running, Churn::allocate);
		Workload.start("throw", running, Churn::throwing);
		Workload.start("plugin", running, Churn::plugins);
		Workload.start("collect", running, () -> Stress.collect(GC_INTERVAL_MS));
		running.await();
		Workload.ready();
		for (long n = 1;; n++) {
			Thread.sleep(BEAT_MS);
			startAndJoin("beat");
			sink = new byte[4096];
			System.out.println("alive " + n);
			System.out.flush();
		}
	}
}
