import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/*
 * FsyncLoop: one thread, named fsync, that writes 16 bytes into a file and
 * makes them durable with FileChannel.force(true), in a loop. Its CPU time
 * is mostly the kernel's: force(true) reaches the native method
 * sun.nio.ch.FileDispatcherImpl.force0 (JDK 17; UnixFileDispatcherImpl.force0
 * on JDK 25), which calls fsync(2). The file is FILE (default
 * fsync-loop.dat in the working directory; put it on a disk file system, not
 * tmpfs, where fsync costs nothing); the writes cycle through its first 64 KiB,
 * and the file is left behind.
 *
 *   java FsyncLoop [FILE]
 *
 * It prints "ready" once the thread runs and, on SIGTERM, the truth:
 * "syncs N", the calls to force that returned.
 */
public final class FsyncLoop {
	private static final AtomicLong syncs = new AtomicLong();

	private FsyncLoop() {
	}

	static void syncLoop(FileChannel file) throws IOException {
		ByteBuffer record = ByteBuffer.allocate(16);

		for (long n = 0;; n++) {
			record.clear();
			record.putLong(n).putLong(System.nanoTime()).flip();
			file.write(record, (n % 4096) * 16);
			file.force(true);
			syncs.incrementAndGet();
		}
	}

	public static void main(String[] args) throws Exception {
		Path path = Path.of(args.length > 0 ? args[0] : "fsync-loop.dat");
		FileChannel file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
		CountDownLatch running = new CountDownLatch(1);

		Workload.onStop(() -> {
			Map<String, Long> truth = new LinkedHashMap<>();
			truth.put("syncs", syncs.get());
			return truth;
		});
		new Thread(() -> {
			running.countDown();
			try {
				syncLoop(file);
			} catch (IOException e) {
				System.err.println("FsyncLoop: " + e);
				System.exit(1);
			}
		}, "fsync").start();
		running.await();
		Workload.ready();
	}
}
