import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

/*
 * WalkShapes: the shapes of Java stacks a walker of HotSpot's frames must
 * get right, each on threads of its own, for tests/integration/test_java_walk.c.
 *
 *   java WalkShapes shapes LIBWALKJNI   threads recurse-0 (a recursion 40
 *                                       deep), lambda-0 (lambdas composed),
 *                                       handle-0 (MethodHandle.invokeExact),
 *                                       throw-0 (throws and catches in a loop),
 *                                       jni-0 (Java -> JNI -> Java -> JNI:
 *                                       LIBWALKJNI, tests/workloads/jni/walkjni.c)
 *   java WalkShapes deep                thread deep-0: a recursion 1000 deep
 *                                       that spins at its bottom
 *
 * Every thread loops until SIGTERM; "ready" once all run, then "alive N"
 * heartbeats; the truth at the stop is "rounds N" (Workload.runThreads).
 */
final class WalkShapes {
	static volatile long sink;

	private static final MethodHandle SPIN;

	static {
		try {
			SPIN = MethodHandles.lookup().findStatic(WalkShapes.class, "spin",
				MethodType.methodType(long.class, int.class));
		} catch (ReflectiveOperationException e) {
			throw new ExceptionInInitializerError(e);
		}
	}

	private WalkShapes() {
	}

	static long spin(int n) {
		long x = 0;

		for (int i = 0; i < n; i++)
			x = x * 31 + i;
		return x;
	}

	static long recurse(int depth, int work) {
		if (depth == 0)
			return spin(work);
		return recurse(depth - 1, work) + 1;
	}

	static long viaLambdas(int n) {
		IntUnaryOperator f = x -> x * 3 + 1;
		IntUnaryOperator g = f.andThen(x -> x ^ (x >>> 7));
		long s = 0;

		for (int i = 0; i < n; i++)
			s += g.applyAsInt(i);
		return s;
	}

	static long viaHandles(int n) throws Throwable {
		long s = 0;

		for (int i = 0; i < n; i++)
			s += (long) SPIN.invokeExact(200);
		return s;
	}

	static void thrower(int i) {
		if ((i & 1) == 0)
			throw new IllegalStateException("even");
		sink += i;
	}

	static long throwing(int n) {
		long caught = 0;

		for (int i = 0; i < n; i++) {
			try {
				thrower(i);
			} catch (IllegalStateException e) {
				caught++;
			}
		}
		return caught;
	}

	/* JNI: calls back fromNative(n) through CallStaticLongMethod. */
	static native long nativeCallback(int n);

	/* JNI: spins in C for n rounds. */
	static native long nativeLeaf(int n);

	static long fromNative(int n) {
		return nativeLeaf(n) + spin(1000);
	}

	public static void main(String[] args) throws Exception {
		String usage = "java WalkShapes shapes LIBWALKJNI | deep";
		AtomicLong rounds = new AtomicLong();

		if (args.length == 2 && args[0].equals("shapes")) {
			System.load(args[1]);
			CountDownLatch running = new CountDownLatch(5);

			Workload.onStop(() -> Map.of("rounds", rounds.get()));
			Workload.start("recurse-0", running, () -> {
				for (;;) {
					sink += recurse(40, 50000);
					rounds.incrementAndGet();
				}
			});
			Workload.start("lambda-0", running, () -> {
				for (;;)
					sink += viaLambdas(100000);
			});
			Workload.start("handle-0", running, () -> {
				try {
					for (;;)
						sink += viaHandles(1000);
				} catch (Throwable e) {
					throw new IllegalStateException(e);
				}
			});
			Workload.start("throw-0", running, () -> {
				for (;;)
					sink += throwing(1000);
			});
			Workload.start("jni-0", running, () -> {
				for (;;)
					sink += nativeCallback(100000);
			});
			running.await();
		} else if (args.length == 1 && args[0].equals("deep")) {
			CountDownLatch running = new CountDownLatch(1);

			Workload.onStop(() -> Map.of("rounds", rounds.get()));
			Workload.start("deep-0", running, () -> {
				for (;;) {
					sink += recurse(1000, 10000000);
					rounds.incrementAndGet();
				}
			});
			running.await();
		} else {
			System.err.println("usage: " + usage);
			System.exit(2);
		}
		Workload.ready();
		Workload.heartbeat();
	}
}
