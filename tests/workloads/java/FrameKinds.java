import java.util.concurrent.atomic.AtomicLong;

/*
 * FrameKinds: Java frames whose kind (compiled, inlined, interpreted) only a
 * walk of HotSpot's own frames can tell, run with
 *
 *   java -XX:CompileCommand=quiet
 *        -XX:CompileCommand=exclude,FrameKinds::interpreted
 *        -XX:CompileCommand=dontinline,FrameKinds::outer
 *        -XX:CompileCommand=dontinline,FrameKinds::level
 *        -XX:CompileCommand=dontinline,FrameKinds::callsInterpreted
 *        -XX:CompileCommand=inline,FrameKinds::mid
 *        FrameKinds [-t THREADS]
 *
 * Each thread (kinds-0, kinds-1, ...) loops over two paths:
 *   level -> mid -> outer -> inlinee: level and outer are compiled frames of
 *     their own, mid is inlined into level and inlinee into outer. Below
 *     outer's frame (compiled code keeps no frame pointer) only the agent's
 *     walk reaches mid, and no inference can call it inlined;
 *   callsInterpreted -> interpreted: a compiled caller of a method that is
 *     never compiled.
 * It prints "ready" once every thread runs, "alive N" every 100 ms, and on
 * SIGTERM the truth: "rounds N", summed over threads.
 */
public final class FrameKinds {
	private static final String USAGE = "java FrameKinds [-t THREADS]";
	private static final AtomicLong rounds = new AtomicLong();
	private static volatile long sink;

	private FrameKinds() {
	}

	static int inlinee(int x) {
		return (x * 31 + 7) ^ (x >>> 3);
	}

	static long outer(int n) {
		long sum = 0;

		for (int i = 0; i < n; i++)
			sum += inlinee(i + (int) sum);
		return sum;
	}

	static long mid(int n) {
		return outer(n) + 1;
	}

	static long level(int n) {
		return mid(n) ^ n;
	}

	static long interpreted(int n) {
		long sum = 0;

		for (int i = 0; i < n; i++)
			sum += i ^ sum;
		return sum;
	}

	static long callsInterpreted(int n) {
		return interpreted(n) + n;
	}

	private static void loop() {
		for (int round = 0;; round++) {
			sink = level(20000 + (round & 15)) + callsInterpreted(2000 + (round & 15));
			rounds.incrementAndGet();
		}
	}

	public static void main(String[] args) throws Exception {
		Workload.runThreads("kinds", Workload.threadsOption(USAGE, args, 0), FrameKinds::loop, rounds);
	}
}
