package mobmem.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

/**
 * Search over Apache Lucene (in the spirit of DaCapo lusearch): setup indexes a deterministic
 * synthetic corpus into an on-heap directory; each iteration runs the same query set on several
 * threads (term, boolean, phrase and prefix queries), reading the stored text of the top hits.
 * Options: --docs N (default 20000), --queries N per thread (default 1500), --threads T (default 2).
 */
public final class LuceneSearch implements Workload {
    private IndexSearcher searcher;
    private StandardAnalyzer analyzer;
    private List<String> queries;
    private int threads;

    @Override
    public void setup(Args args) throws Exception {
        int docs = args.getInt("docs", 20000);
        int nq = args.getInt("queries", 1500);
        threads = args.getInt("threads", 2);
        long seed = args.getLong("seed", 42);
        Corpus c = new Corpus(20000, seed);
        SplittableRandom r = new SplittableRandom(seed + 1);
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        analyzer = new StandardAnalyzer();
        try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(analyzer))) {
            for (int i = 0; i < docs; i++) {
                Document d = new Document();
                d.add(new StringField("id", Integer.toString(i), Field.Store.YES));
                d.add(new TextField("title", c.sentence(r, 3 + r.nextInt(6)), Field.Store.YES));
                d.add(new TextField("body", c.sentence(r, 80 + r.nextInt(160)), Field.Store.YES));
                w.addDocument(d);
            }
            w.forceMerge(1);
        }
        searcher = new IndexSearcher(DirectoryReader.open(dir));
        queries = new ArrayList<>();
        SplittableRandom qr = new SplittableRandom(seed + 2);
        for (int i = 0; i < nq; i++) {
            switch (i % 4) {
                case 0: queries.add(c.word(qr)); break;
                case 1: queries.add("+" + c.word(qr) + " +" + c.word(qr) + " " + c.word(qr)); break;
                case 2: queries.add("\"" + c.word(qr) + " " + c.word(qr) + "\"~4"); break;
                default: {
                    String w = c.word(qr);
                    queries.add("title:" + w.substring(0, Math.min(3, w.length())) + "* " + c.word(qr));
                }
            }
        }
    }

    private long runQueries(int thread) throws Exception {
        QueryParser p = new QueryParser("body", analyzer);
        long sum = 0;
        for (int i = 0; i < queries.size(); i++) {
            Query q = p.parse(queries.get((i + thread * 7) % queries.size()));
            TopDocs top = searcher.search(q, 20);
            sum += Math.min(top.totalHits.value, 1000);
            for (ScoreDoc sd : top.scoreDocs) {
                Document d = searcher.storedFields().document(sd.doc);
                sum += d.get("body").length() & 0xff;
            }
        }
        return sum;
    }

    @Override
    public long iterate() throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int tt = t;
                fs.add(ex.submit(() -> runQueries(tt)));
            }
            long s = 0;
            for (Future<Long> f : fs) s += f.get();
            return s;
        } finally {
            ex.shutdown();
        }
    }

    private long first = -1;

    @Override
    public String validate(long checksum) {
        if (checksum <= 0) return "no hits";
        if (first < 0) first = checksum;
        return checksum == first ? null : "checksum changed between iterations: " + checksum + " vs " + first;
    }
}
