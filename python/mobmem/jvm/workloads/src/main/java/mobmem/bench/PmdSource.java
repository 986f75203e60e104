package mobmem.bench;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import net.sourceforge.pmd.PMDConfiguration;
import net.sourceforge.pmd.PmdAnalysis;
import net.sourceforge.pmd.lang.LanguageRegistry;
import net.sourceforge.pmd.lang.document.FileId;
import net.sourceforge.pmd.lang.rule.RuleSet;
import net.sourceforge.pmd.lang.rule.RuleSetLoader;
import net.sourceforge.pmd.reporting.Report;

/**
 * Source analysis over PMD 7 (in the spirit of DaCapo pmd): setup reads Java files from a sources
 * jar (Apache Commons Lang, fetched by Maven); setup parses a PMD rule set once (--rules, default category/java/bestpractices.xml); each iteration runs it over
 * them with several analysis threads and counts violations. Options: --sources JAR (required),
 * --files N (default 120), --threads T (default 2).
 */
public final class PmdSource implements Workload {
    private final List<String[]> files = new ArrayList<>();
    private int threads;
    private RuleSet rules;

    @Override
    public void setup(Args args) throws Exception {
        String jar = args.get("sources", null);
        if (jar == null) throw new IllegalArgumentException("pmd needs --sources JAR");
        int max = args.getInt("files", 120);
        threads = args.getInt("threads", 2);
        try (InputStream in = Files.newInputStream(Path.of(jar)); ZipInputStream z = new ZipInputStream(in)) {
            List<String[]> all = new ArrayList<>();
            for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                if (e.getName().endsWith(".java") && !e.getName().endsWith("module-info.java"))
                    all.add(new String[] {e.getName(), new String(z.readAllBytes(), StandardCharsets.UTF_8)});
            }
            all.sort((a, b) -> a[0].compareTo(b[0]));
            for (int i = 0; i < all.size() && files.size() < max; i++) files.add(all.get(i));
        }
        if (files.isEmpty()) throw new IllegalStateException("no Java sources in " + jar);
        // Rule sets (including XPath rules) are parsed once; each iteration analyses the sources anew.
        String ruleset = args.get("rules", "category/java/bestpractices.xml");
        rules = RuleSetLoader.fromPmdConfig(config()).loadFromResource(ruleset);
    }

    private PMDConfiguration config() {
        PMDConfiguration config = new PMDConfiguration();
        config.setDefaultLanguageVersion(LanguageRegistry.PMD.getLanguageVersionById("java", "17"));
        config.setThreads(threads);
        config.setIgnoreIncrementalAnalysis(true);
        return config;
    }

    @Override
    public long iterate() {
        try (PmdAnalysis pmd = PmdAnalysis.create(config())) {
            pmd.addRuleSet(rules);
            for (String[] f : files) pmd.files().addSourceFile(FileId.fromPathLikeString(f[0]), f[1]);
            Report report = pmd.performAnalysisAndCollectReport();
            return report.getViolations().size() * 1000L + report.getProcessingErrors().size();
        }
    }

    private long first = -1;

    @Override
    public String validate(long checksum) {
        if (checksum <= 0) return "no violations found";
        if (first < 0) first = checksum;
        return checksum == first ? null : "violation count changed between iterations: " + checksum + " vs " + first;
    }
}
