import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/*
 * JavacDriver: the JDK's own compiler as a Java workload for
 * bench/java_overhead.sh. One JVM runs javac several times, so a profiler
 * can attach to it before the measured work starts.
 *
 *   java JavacDriver COMPILES @ARGFILE [hold]
 *
 * It prints "ready", waits for one line on standard input (the benchmark
 * sends it once the profiler samples), then runs javac with the options and
 * files listed in ARGFILE (javac's own @file format) COMPILES times, in
 * this JVM, through javax.tools. After each it prints "compile_ms N"; at the
 * end "cpu_ns N", the CPU time the whole JVM used meanwhile (all its
 * threads: compilers and GC too), then "elapsed_ns N" for all of them, the
 * time the benchmark compares. With hold it then waits for one more line
 * before it exits, so that a test can look at the JVM after its work. Any
 * compilation error ends it with status 1. javac's diagnostics are
 * discarded (JDK sources draw hundreds of warnings that no option silences).
 */
public final class JavacDriver {
	private JavacDriver() {
	}

	public static void main(String[] args) throws Exception {
		boolean hold = args.length == 3 && args[2].equals("hold");

		if ((args.length != 2 && !hold) || !args[1].startsWith("@")) {
			System.err.println("usage: java JavacDriver COMPILES @ARGFILE [hold]");
			System.exit(2);
		}
		int compiles = Workload.positiveArg("java JavacDriver COMPILES @ARGFILE", args[0]);
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		if (javac == null) {
			System.err.println("JavacDriver: this Java runtime has no compiler (a JRE, not a JDK?)");
			System.exit(1);
		}
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

		System.out.println("ready");
		System.out.flush();
		if (in.readLine() == null)
			System.exit(1);
		com.sun.management.OperatingSystemMXBean os =
			(com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
		long cpuStart = os.getProcessCpuTime();
		long start = System.nanoTime();
		for (int i = 0; i < compiles; i++) {
			long t = System.nanoTime();
			int status = javac.run(null, OutputStream.nullOutputStream(), OutputStream.nullOutputStream(), args[1]);

			if (status != 0) {
				System.err.println("JavacDriver: javac " + args[1] + " failed with status " + status
						+ "; run it as javac " + args[1] + " to see why");
				System.exit(1);
			}
			System.out.println("compile_ms " + (System.nanoTime() - t) / 1_000_000);
			System.out.flush();
		}
		long elapsed = System.nanoTime() - start;

		System.out.println("cpu_ns " + (os.getProcessCpuTime() - cpuStart));
		System.out.println("elapsed_ns " + elapsed);
		System.out.flush();
		if (hold)
			in.readLine();
	}
}
