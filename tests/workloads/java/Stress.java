import java.io.IOException;
import java.io.InputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Stress: a JVM doing, all at once, what makes profiling a JVM hard.
 *
 *  - Allocation: threads alloc-0, alloc-1, ... allocate short-lived garbage
 *    as fast as they can, keep a moving window of larger arrays (an eighth
 *    of the heap's maximum between them) so objects live long enough to be
 *    promoted, and now and then allocate an array of 4 MiB (humongous for
 *    G1): young, mixed and humongous collections follow each other.
 *  - Deoptimisation, class loading and unloading: threads plugin-0, ...
 *    define StressPlugin and its nested classes from their class file bytes
 *    in a new class loader, run it (C2 compiles, then deoptimises twice: see
 *    StressPlugin) and drop the loader.
 *  - A thread named collect calls System.gc() every 2 s: full collections,
 *    which unload the dropped loaders' classes.
 *
 *   java Stress [ALLOC_THREADS [PLUGIN_THREADS]]     (default 2 and 1)
 *
 * It runs until SIGTERM: it prints "ready" once every thread runs, then
 * "alive N" every 100 ms; on SIGTERM the truth: "allocated_mb N",
 * "plugin_rounds N", "classes_unloaded N" and "gc_count N". A thread that
 * fails ends the JVM with status 1, so a live JVM means all of it still runs.
 */
public final class Stress {
	private static final String USAGE = "java Stress [ALLOC_THREADS [PLUGIN_THREADS]]";
	/* StressPlugin's warm-up on circles; a round lasts 1.5 times this. */
	private static final long PLUGIN_WARMUP_NS = 200_000_000L;
	private static final long GC_INTERVAL_MS = 2000;

	private static final AtomicLong allocatedBytes = new AtomicLong(), pluginRounds = new AtomicLong();
	private static volatile Object sink;

	private Stress() {
	}

	static void allocate(int seed, int windowSlots) {
		Random random = new Random(seed);
		Object[] window = new Object[windowSlots];

		for (long n = 0;; n++) {
			List<Object> garbage = new ArrayList<>();
			long bytes = 0;

			for (int i = 0; i < 1000; i++) {
				long[] small = new long[random.nextInt(16)];
				garbage.add(small);
				bytes += 16 + 8L * small.length;
			}
			for (int i = 0; i < 50; i++)
				garbage.add(Long.toString(random.nextLong()));
			byte[] kept = new byte[1024 + random.nextInt(63 << 10)];
			window[(int) (n % windowSlots)] = kept;
			bytes += kept.length;
			if (n % 64 == 0) {
				byte[] huge = new byte[4 << 20];
				garbage.add(huge);
				bytes += huge.length;
			}
			/* Published, so that escape analysis cannot do away with any of it. */
			sink = garbage;
			allocatedBytes.addAndGet(bytes);
		}
	}

	/* Defines the classes it is given from their bytes, and asks its parent for the rest. */
	static final class PluginLoader extends ClassLoader {
		private final Map<String, byte[]> classes;

		PluginLoader(Map<String, byte[]> classes) {
			super("stress-plugin", Stress.class.getClassLoader());
			this.classes = classes;
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			byte[] bytes = classes.get(name);

			if (bytes == null)
				return super.loadClass(name, resolve);
			synchronized (getClassLoadingLock(name)) {
				Class<?> c = findLoadedClass(name);
				if (c == null)
					c = defineClass(name, bytes, 0, bytes.length);
				if (resolve)
					resolveClass(c);
				return c;
			}
		}
	}

	/* The class files of StressPlugin and its nested classes, by class name. */
	static Map<String, byte[]> pluginClasses() throws IOException {
		Map<String, byte[]> classes = new HashMap<>();

		for (Class<?> c : StressPlugin.class.getNestMembers()) {
			try (InputStream in = Stress.class.getClassLoader()
					.getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
				if (in == null)
					throw new IOException("no class file for " + c.getName());
				classes.put(c.getName(), in.readAllBytes());
			}
		}
		return classes;
	}

	/* Loads StressPlugin into a new loader, runs it (warm-up warmupNs), and drops the loader. */
	static void pluginRound(Map<String, byte[]> classes, long warmupNs) throws ReflectiveOperationException {
		Class<?> plugin = new PluginLoader(classes).loadClass(StressPlugin.class.getName());
		Object checksum = plugin.getMethod("run", long.class).invoke(null, warmupNs);

		if (checksum == null)
			throw new IllegalStateException("StressPlugin.run returned nothing");
	}

	static void plugins(Map<String, byte[]> classes) throws ReflectiveOperationException {
		for (;;) {
			pluginRound(classes, PLUGIN_WARMUP_NS);
			pluginRounds.incrementAndGet();
		}
	}

	/* A full collection every intervalMs, which unloads the classes of dropped loaders. */
	static void collect(long intervalMs) throws InterruptedException {
		for (;;) {
			Thread.sleep(intervalMs);
			System.gc();
		}
	}

	public static void main(String[] args) throws Exception {
		int allocThreads = args.length > 0 ? Workload.positiveArg(USAGE, args[0]) : 2;
		int pluginThreads = args.length > 1 ? Workload.positiveArg(USAGE, args[1]) : 1;
		Map<String, byte[]> classes = pluginClasses();
		/* Window arrays average 32 KiB; all windows together hold an eighth of the maximum heap. */
		int windowSlots = (int) Math.max(64, Runtime.getRuntime().maxMemory() / 8 / allocThreads / (32 << 10));
		CountDownLatch running = new CountDownLatch(allocThreads + pluginThreads + 1);

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			long gcs = 0;

			for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
				gcs += Math.max(0, gc.getCollectionCount());
			truth.put("allocated_mb", allocatedBytes.get() >> 20);
			truth.put("plugin_rounds", pluginRounds.get());
			truth.put("classes_unloaded", ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount());
			truth.put("gc_count", gcs);
			return truth;
		});
		for (int i = 0; i < allocThreads; i++) {
			int seed = i;
			Workload.start("alloc-" + i, running, () -> allocate(seed, windowSlots));
		}
		for (int i = 0; i < pluginThreads; i++)
			Workload.start("plugin-" + i, running, () -> plugins(classes));
		Workload.start("collect", running, () -> collect(GC_INTERVAL_MS));
		running.await();
		Workload.ready();
		Workload.heartbeat();
	}
}
