import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Deflater;

/*
 * JniDeflate: threads that compress the same 4 MiB of text with
 * java.util.zip.Deflater, over and over. Almost all their time is in zlib,
 * reached through a JNI method: JniDeflate.deflateLoop calls
 * Deflater.deflate, whose native method deflateBytesBytes (JDK 17 to 25)
 * calls Java_java_util_zip_Deflater_deflateBytesBytes, then zlib's deflate.
 *
 *   java JniDeflate [THREADS]     (default 2)
 *
 * Threads are named deflate-0, deflate-1, ... It prints "ready" once every
 * thread runs and, on SIGTERM, the truth: "rounds N" (whole inputs
 * compressed) and "bytes_out N", summed over threads.
 */
public final class JniDeflate {
	private static final int INPUT_BYTES = 4 << 20;
	private static final AtomicLong rounds = new AtomicLong(), bytesOut = new AtomicLong();

	private JniDeflate() {
	}

	/*
	 * Words drawn from a small vocabulary with a fixed seed: text zlib
	 * compresses about 3:1 with real work (matches and literals), unlike
	 * zeros or noise.
	 */
	private static byte[] text() {
		String[] words = { "profiler", "sample", "stack", "frame", "kernel", "thread", "deflate", "java",
				"native", "method", "compiled", "inlined", "interpreted", "signal", "buffer", "ring" };
		Random random = new Random(42);
		StringBuilder s = new StringBuilder(INPUT_BYTES + 16);

		while (s.length() < INPUT_BYTES)
			s.append(words[random.nextInt(words.length)]).append(random.nextInt(1000)).append(' ');
		s.setLength(INPUT_BYTES);
		return s.toString().getBytes(StandardCharsets.US_ASCII);
	}

	/* Compresses input whole, again and again; each deflate call fills up to 64 KiB of output. */
	static void deflateLoop(byte[] input) {
		Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
		byte[] out = new byte[64 << 10];

		for (;;) {
			long n = 0;

			deflater.reset();
			deflater.setInput(input);
			deflater.finish();
			while (!deflater.finished())
				n += deflater.deflate(out);
			bytesOut.addAndGet(n);
			rounds.incrementAndGet();
		}
	}

	public static void main(String[] args) throws InterruptedException {
		int threads = args.length > 0 ? Workload.positiveArg("java JniDeflate [THREADS]", args[0]) : 2;
		byte[] input = text();
		CountDownLatch running = new CountDownLatch(threads);

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("rounds", rounds.get());
			truth.put("bytes_out", bytesOut.get());
			return truth;
		});
		for (int i = 0; i < threads; i++)
			new Thread(() -> {
				running.countDown();
				deflateLoop(input);
			}, "deflate-" + i).start();
		running.await();
		Workload.ready();
	}
}
