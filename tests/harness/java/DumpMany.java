/*
 * Runs DumpLogSegments.main once per job inside one JVM (hundreds of JVM starts would take minutes),
 * capturing each run's stdout and stderr separately, exactly as the CLI prints them.
 *
 *   java -cp '<kafka libs>/*' DumpMany.java <DumpLogSegments class> <jobs.tsv>
 *
 * The class is kafka.tools.DumpLogSegments (Scala, Kafka 3.x) or org.apache.kafka.tools.DumpLogSegments
 * (Java, Kafka 4.x).
 *
 * Each job line: <stdout file> TAB <stderr file> TAB <DumpLogSegments arg> [TAB <arg> ...].
 * A run that throws gets the JVM's usual "Exception in thread "main" ..." text on its stderr.
 */

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

public class DumpMany {
    /** Forwards to a replaceable target; installed before Scala's Console captures System.out. */
    static final class Switch extends OutputStream {
        OutputStream target = OutputStream.nullOutputStream();
        @Override public void write(int b) throws IOException { target.write(b); }
        @Override public void write(byte[] b, int off, int len) throws IOException { target.write(b, off, len); }
    }

    /** Drop this wrapper's frames so the trace reads as if the CLI itself had thrown it. */
    static void trimToToolMain(Throwable t, String tool) {
        StackTraceElement[] st = t.getStackTrace();
        for (int i = st.length - 1; i >= 0; i--) {
            if (st[i].getClassName().equals(tool) && st[i].getMethodName().equals("main")) {
                t.setStackTrace(Arrays.copyOf(st, i + 1));
                return;
            }
        }
    }

    /** Make Kafka's Exit.exit throw instead of ending the JVM. The class moved in 4.x (utils.internals). */
    static void noExit() throws Exception {
        for (String name : new String[] {"org.apache.kafka.common.utils.Exit",
                                         "org.apache.kafka.common.utils.internals.Exit"}) {
            Class<?> exit;
            try {
                exit = Class.forName(name);
            } catch (ClassNotFoundException e) {
                continue;
            }
            Class<?> procedure = Class.forName(name + "$Procedure");
            Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
                (proxy, method, a) -> {
                    throw new IllegalStateException("Exit.exit(" + a[0] + "): " + a[1]);
                });
            exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
            return;
        }
        throw new ClassNotFoundException("Kafka's Exit class");
    }

    public static void main(String[] args) throws Exception {
        Switch out = new Switch(), err = new Switch();
        PrintStream realErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        noExit();

        String tool = args[0];
        Method toolMain = Class.forName(tool).getMethod("main", String[].class);
        int failed = 0;
        for (String line : Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)) {
            if (line.isBlank()) continue;
            String[] parts = line.split("\t");
            ByteArrayOutputStream bo = new ByteArrayOutputStream(), be = new ByteArrayOutputStream();
            out.target = bo;
            err.target = be;
            try {
                toolMain.invoke(null, (Object) Arrays.copyOfRange(parts, 2, parts.length));
            } catch (Throwable thrown) {
                // reflection wraps what main threw; print that, as the JVM would have
                Throwable t = thrown instanceof InvocationTargetException ? thrown.getCause() : thrown;
                failed++;
                trimToToolMain(t, tool);
                System.err.print("Exception in thread \"main\" ");
                t.printStackTrace(System.err);
            }
            System.out.flush();
            System.err.flush();
            Files.write(Path.of(parts[0]), bo.toByteArray());
            Files.write(Path.of(parts[1]), be.toByteArray());
        }
        realErr.println("DumpMany: " + failed + " run(s) threw");
    }
}
