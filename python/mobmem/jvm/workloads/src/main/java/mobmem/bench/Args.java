package mobmem.bench;

import java.util.HashMap;
import java.util.Map;

/** "--key value" command-line options of the workload harness. */
public final class Args {
    private final Map<String, String> values = new HashMap<>();
    public final String workload;

    public Args(String[] argv) {
        if (argv.length == 0) throw new IllegalArgumentException("usage: Harness WORKLOAD [--key value]...");
        workload = argv[0];
        for (int i = 1; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length)
                throw new IllegalArgumentException("bad option: " + argv[i]);
            values.put(argv[i].substring(2), argv[++i]);
        }
    }

    public int getInt(String key, int dflt) {
        String v = values.get(key);
        return v == null ? dflt : Integer.parseInt(v);
    }

    public long getLong(String key, long dflt) {
        String v = values.get(key);
        return v == null ? dflt : Long.parseLong(v);
    }

    public String get(String key, String dflt) {
        String v = values.get(key);
        return v == null ? dflt : v;
    }
}
