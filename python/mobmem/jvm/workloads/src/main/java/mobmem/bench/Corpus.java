package mobmem.bench;

import java.util.SplittableRandom;

/** Deterministic synthetic text: a vocabulary of pronounceable words with Zipf-distributed use. */
final class Corpus {
    private static final String[] SYLLABLES = {
        "ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "en", "dor", "val", "qui", "ber", "sa", "to", "li",
        "gar", "mon", "fe", "zu", "ix", "an", "or", "ul", "tem", "pra", "vo", "cy", "dre", "ho"
    };
    final String[] words;
    private final double[] cdf;

    Corpus(int vocabulary, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        words = new String[vocabulary];
        java.util.HashSet<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < vocabulary; ) {
            int n = 1 + r.nextInt(4);
            StringBuilder sb = new StringBuilder();
            for (int k = 0; k < n; k++) sb.append(SYLLABLES[r.nextInt(SYLLABLES.length)]);
            String w = sb.toString();
            if (seen.add(w)) words[i++] = w;
        }
        cdf = new double[vocabulary];
        double sum = 0;
        for (int i = 0; i < vocabulary; i++) {
            sum += 1.0 / (i + 1);
            cdf[i] = sum;
        }
        for (int i = 0; i < vocabulary; i++) cdf[i] /= sum;
    }

    String word(SplittableRandom r) {
        double u = r.nextDouble();
        int lo = 0, hi = cdf.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cdf[mid] < u) lo = mid + 1;
            else hi = mid;
        }
        return words[lo];
    }

    String sentence(SplittableRandom r, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(' ');
            sb.append(word(r));
        }
        return sb.toString();
    }
}
