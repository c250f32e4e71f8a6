import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.Deflater;

/*
 * Demo: a stand-in for a small Java service, for a first look at jbpfprof.
 *
 * Each "request" parses a header, checksums a body, compresses it with
 * java.util.zip.Deflater (Java calling into zlib through JNI) and logs a few
 * lines to /dev/null (real system calls), so the flame graph shows Java
 * methods of different weights, native frames under the compression and
 * kernel frames under the logging. One worker thread per CPU; runs for
 * SECONDS (default 60). Prints "ready" once working.
 *
 *   java -cp build/java Demo [SECONDS]
 */
public final class Demo {
	private static final String HEADER = "GET /orders HTTP/1.1\nHost: shop\nAccept: */*\nX-Trace: 42\n";
	private static final int BODY_SIZE = 16 << 10;

	private Demo() {
	}

	static int parseHeader(String text) {
		int fields = 0;

		for (int round = 0; round < 1400; round++)
			for (int i = 0; i < text.length(); i++)
				fields += text.charAt(i) == ':' || text.charAt(i) == '\n' ? 1 : 0;
		return fields;
	}

	static long checksumBody(byte[] body) {
		long sum = 0;

		for (int round = 0; round < 5; round++)
			for (byte b : body)
				sum = (sum << 5) + sum + b;
		return sum;
	}

	static int compressBody(Deflater deflater, byte[] body, byte[] out) {
		deflater.reset();
		deflater.setInput(body);
		deflater.finish();
		int n = 0;
		while (!deflater.finished())
			n += deflater.deflate(out);
		return n;
	}

	static void logRequest(FileOutputStream log, long sum, int size) throws IOException {
		byte[] line = ("request sum=" + Long.toHexString(sum) + " size=" + size + "\n")
				.getBytes(StandardCharsets.US_ASCII);

		for (int i = 0; i < 100; i++)
			log.write(line);
	}

	static void handleRequest(Deflater deflater, FileOutputStream log, byte[] body, byte[] out) throws IOException {
		int fields = parseHeader(HEADER);
		long sum = checksumBody(body);
		int size = compressBody(deflater, body, out);

		logRequest(log, sum + fields, size);
	}

	static void serve() {
		byte[] body = new byte[BODY_SIZE], out = new byte[2 * BODY_SIZE];
		Deflater deflater = new Deflater();

		for (int i = 0; i < body.length; i++)
			body[i] = (byte) ("abcdefghij".charAt(i * 7 % 10) + i / 512 % 13);
		try (FileOutputStream log = new FileOutputStream("/dev/null")) {
			for (;;)
				handleRequest(deflater, log, body, out);
		} catch (IOException e) {
			System.err.println("Demo: " + e);
			System.exit(1);
		}
	}

	public static void main(String[] args) throws InterruptedException {
		int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;

		for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
			Thread worker = new Thread(Demo::serve, "worker-" + i);
			worker.setDaemon(true);
			worker.start();
		}
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(seconds * 1000L);
	}
}
