package mobmem.bench;

/** One benchmark workload: set up once, then run iterations inside the same JVM. */
public interface Workload {
    /** Prepares inputs (not timed). */
    void setup(Args args) throws Exception;

    /** Runs one iteration and returns a checksum that {@link #validate} checks. */
    long iterate() throws Exception;

    /** Returns null when the checksum of an iteration is right, else a description of the problem. */
    String validate(long checksum);
}
