import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * DeepInline: JIT-heavy Java whose frames are mostly inlined, the shape on
 * which the frame kinds (interpreted, compiled, inlined) are easiest to get
 * wrong: each thread (inline-0, inline-1, ...) runs
 *
 *   run (called once: its endless loop is compiled on stack replacement,
 *        an OSR nmethod, with what it calls inlined into it)
 *     -> chain0 -> chain1 -> ... -> chain11   small static methods, a chain
 *          deeper than most inlining, so C2 cuts it into several compiled
 *          frames, each with an inlined tail
 *     -> each chain step calls through two call sites:
 *        - a monomorphic one (Step.apply, one class ever seen there), which
 *          C2 inlines behind a type check;
 *        - a megamorphic one (Shape.area over six classes), a virtual call
 *          C2 cannot inline, so its callees are compiled frames of their own
 *          whose own small helpers are inlined into them;
 *     -> an expression tree's evaluation (Node.eval: sums and products,
 *        recursive, each method inlined into the other and into itself
 *        once), from the OSR frame;
 *     -> every 64th round, a method too big to inline (bulky), a compiled
 *        frame called from the OSR frame.
 *
 * It prints "ready" once every thread runs, and on SIGTERM the truth:
 * "rounds N", summed over threads. The main thread then sleeps.
 *
 *   java DeepInline [-t THREADS]
 */
public final class DeepInline {
	private static final String USAGE = "java DeepInline [-t THREADS]";
	private static final AtomicLong rounds = new AtomicLong();
	private static volatile long sink;

	private DeepInline() {
	}

	/* The megamorphic site's receivers: six classes, each with a small helper of its own. */
	interface Shape {
		long area(long x);
	}

	static final class Square implements Shape {
		static long side(long x) {
			return (x & 1023) + 1;
		}

		public long area(long x) {
			return side(x) * side(x >>> 3);
		}
	}

	static final class Circle implements Shape {
		static long radius(long x) {
			return (x & 511) + 3;
		}

		public long area(long x) {
			long r = radius(x);
			return r * r * 355 / 113;
		}
	}

	static final class Triangle implements Shape {
		static long base(long x) {
			return (x ^ 0x55) & 2047;
		}

		public long area(long x) {
			return base(x) * ((x >>> 5) & 255) / 2;
		}
	}

	static final class Hexagon implements Shape {
		static long edge(long x) {
			return Long.rotateLeft(x, 7) & 4095;
		}

		public long area(long x) {
			long e = edge(x);
			return e * e * 2598 / 1000;
		}
	}

	static final class Ring implements Shape {
		static long inner(long x) {
			return (x >>> 2) & 255;
		}

		public long area(long x) {
			long in = inner(x), out = in + (x & 63) + 1;
			return (out * out - in * in) * 355 / 113;
		}
	}

	static final class Blob implements Shape {
		static long lobes(long x) {
			return Long.bitCount(x) + 1;
		}

		public long area(long x) {
			long sum = 0;
			for (long i = lobes(x); i > 0; i--)
				sum += (x >>> i) & 31;
			return sum;
		}
	}

	/* The monomorphic site's receiver: the only Step there is. */
	interface Step {
		long apply(long x);
	}

	static final class Mix implements Step {
		public long apply(long x) {
			return (x * 0x9E3779B97F4A7C15L) ^ (x >>> 29);
		}
	}

	private static final Shape[] SHAPES = { new Square(), new Circle(), new Triangle(), new Hexagon(), new Ring(),
		new Blob() };
	private static final Step STEP = new Mix();

	/* One link of the chain: the monomorphic call, then the megamorphic one. */
	static long link(long x, int i) {
		long y = STEP.apply(x + i);
		return y + SHAPES[(int) ((y >>> 11) % SHAPES.length + SHAPES.length) % SHAPES.length].area(y);
	}

	static long chain11(long x) {
		return link(x, 11);
	}

	static long chain10(long x) {
		return chain11(link(x, 10));
	}

	static long chain9(long x) {
		return chain10(link(x, 9));
	}

	static long chain8(long x) {
		return chain9(link(x, 8));
	}

	static long chain7(long x) {
		return chain8(link(x, 7));
	}

	static long chain6(long x) {
		return chain7(link(x, 6));
	}

	static long chain5(long x) {
		return chain6(link(x, 5));
	}

	static long chain4(long x) {
		return chain5(link(x, 4));
	}

	static long chain3(long x) {
		return chain4(link(x, 3));
	}

	static long chain2(long x) {
		return chain3(link(x, 2));
	}

	static long chain1(long x) {
		return chain2(link(x, 1));
	}

	static long chain0(long x) {
		return chain1(link(x, 0));
	}

	/*
	 * An expression tree of alternating sums and products over leaves: each
	 * call site sees one or two receiver classes, so C2 inlines Sum.eval
	 * into Product.eval into Sum.eval (a recursion inlined once into itself,
	 * MaxRecursiveInlineLevel), and one method is both a compiled frame and
	 * inlined in the frame above it.
	 */
	abstract static class Node {
		abstract long eval(long x);
	}

	static final class Leaf extends Node {
		private final long k;

		Leaf(long k) {
			this.k = k;
		}

		long eval(long x) {
			return x * 3 + k;
		}
	}

	static final class Sum extends Node {
		private final Node left, right;

		Sum(Node left, Node right) {
			this.left = left;
			this.right = right;
		}

		long eval(long x) {
			return left.eval(x) + right.eval(x + 1);
		}
	}

	static final class Product extends Node {
		private final Node left, right;

		Product(Node left, Node right) {
			this.left = left;
			this.right = right;
		}

		long eval(long x) {
			return left.eval(x) * (right.eval(x ^ 5) | 1);
		}
	}

	/* A complete tree of depth levels: sums at even depths, products at odd ones. */
	static Node tree(int levels, int depth) {
		if (depth == levels)
			return new Leaf(depth * 7L + levels);
		Node left = tree(levels, depth + 1), right = tree(levels, depth + 1);
		return depth % 2 == 0 ? new Sum(left, right) : new Product(left, right);
	}

	private static final Node TREE = tree(11, 0);

	/* Too big for C2 to inline (over FreqInlineSize's bytecodes): a compiled frame of its own. */
	static long bulky(long x) {
		long a = x, b = x >>> 1, c = x >>> 2, d = x >>> 3;

		for (int i = 0; i < 200; i++) {
			a = a * 31 + (b ^ c);
			b = b * 37 + (c ^ d);
			c = c * 41 + (d ^ a);
			d = d * 43 + (a ^ b);
			a ^= Long.rotateLeft(b, 13) + Long.rotateRight(c, 7);
			b ^= Long.rotateLeft(c, 17) + Long.rotateRight(d, 11);
			c ^= Long.rotateLeft(d, 19) + Long.rotateRight(a, 3);
			d ^= Long.rotateLeft(a, 23) + Long.rotateRight(b, 5);
			a += (b & c) | (~b & d);
			b += (c & d) | (~c & a);
			c += (d & a) | (~d & b);
			d += (a & b) | (~a & c);
			a = a * 47 + (b ^ c);
			b = b * 53 + (c ^ d);
			c = c * 59 + (d ^ a);
			d = d * 61 + (a ^ b);
			a ^= Long.rotateLeft(b, 29) + Long.rotateRight(c, 31);
			b ^= Long.rotateLeft(c, 37) + Long.rotateRight(d, 41);
			c ^= Long.rotateLeft(d, 43) + Long.rotateRight(a, 47);
			d ^= Long.rotateLeft(a, 53) + Long.rotateRight(b, 59);
		}
		return a ^ b ^ c ^ d;
	}

	/* Called once per thread: its loop runs long enough to be compiled on stack replacement. */
	private static void run() {
		long x = Thread.currentThread().getId();

		for (long round = 0;; round++) {
			x = chain0(x + round) + TREE.eval(x);
			if ((round & 63) == 0)
				x ^= bulky(x);
			sink = x;
			rounds.incrementAndGet();
		}
	}

	/*
	 * Unlike Workload.runThreads, the main thread stays asleep once the
	 * workers run: no heartbeat, so that every Java frame on a CPU is the
	 * workers' JIT-compiled code, the shape this workload is for.
	 */
	public static void main(String[] args) throws Exception {
		int threads = Workload.threadsOption(USAGE, args, 0);
		CountDownLatch running = new CountDownLatch(threads);

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("rounds", rounds.get());
			return truth;
		});
		for (int i = 0; i < threads; i++)
			Workload.start("inline-" + i, running, DeepInline::run);
		running.await();
		Workload.ready();
		for (;;)
			Thread.sleep(60_000);
	}
}
