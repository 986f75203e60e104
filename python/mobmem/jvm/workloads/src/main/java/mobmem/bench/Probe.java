package mobmem.bench;

/**
 * Marks the timed iteration for the mobmem JVMTI agent (native methods implemented in the agent
 * library, which HotSpot searches for natives). Without the agent the calls are no-ops.
 */
public final class Probe {
    private static boolean agent = true;

    private Probe() {}

    private static native void begin0();

    private static native void end0();

    public static void begin() {
        if (!agent) return;
        try {
            begin0();
        } catch (UnsatisfiedLinkError e) {
            agent = false;
        }
    }

    public static void end() {
        if (!agent) return;
        try {
            end0();
        } catch (UnsatisfiedLinkError e) {
            agent = false;
        }
    }

    public static boolean agentPresent() {
        return agent;
    }
}
