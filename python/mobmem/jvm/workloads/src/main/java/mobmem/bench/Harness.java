package mobmem.bench;

/**
 * Runs a workload: setup, N warm-up iterations, then one timed iteration bracketed by
 * {@link Probe#begin()}/{@link Probe#end()}. Prints one "MOBMEM ..." line per iteration on stdout
 * (System.nanoTime() stamps, the same clock as the unified-logging "timenanos" decorator).
 * Exit codes: 0 ok, 4 invalid result, 2 bad arguments; an OutOfMemoryError is left to the JVM.
 */
public final class Harness {
    private Harness() {}

    static Workload create(String name) throws Exception {
        switch (name) {
            case "gcbench":
                return new GCBench();
            case "lusearch":
                return (Workload) Class.forName("mobmem.bench.LuceneSearch").getDeclaredConstructor().newInstance();
            case "xalan":
                return (Workload) Class.forName("mobmem.bench.XalanXslt").getDeclaredConstructor().newInstance();
            case "pmd":
                return (Workload) Class.forName("mobmem.bench.PmdSource").getDeclaredConstructor().newInstance();
            default:
                throw new IllegalArgumentException("unknown workload: " + name);
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args;
        Workload w;
        try {
            args = new Args(argv);
            w = create(args.workload);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        int warmup = args.getInt("warmup", 2);
        long s0 = System.nanoTime();
        w.setup(args);
        System.out.println("MOBMEM setup start_ns=" + s0 + " end_ns=" + System.nanoTime());
        for (int i = 0; i < warmup; i++) {
            long t0 = System.nanoTime();
            long c = w.iterate();
            long t1 = System.nanoTime();
            String bad = w.validate(c);
            System.out.println("MOBMEM warmup " + i + " start_ns=" + t0 + " end_ns=" + t1 + " checksum=" + c);
            if (bad != null) {
                System.err.println("MOBMEM invalid: " + bad);
                System.exit(4);
            }
        }
        System.out.flush();
        Probe.begin();
        long t0 = System.nanoTime();
        long c = w.iterate();
        long t1 = System.nanoTime();
        Probe.end();
        String bad = w.validate(c);
        System.out.println("MOBMEM timed start_ns=" + t0 + " end_ns=" + t1 + " checksum=" + c
                + " agent=" + Probe.agentPresent());
        if (bad != null) {
            System.err.println("MOBMEM invalid: " + bad);
            System.exit(4);
        }
    }
}
