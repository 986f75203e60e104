package mobmem.bench;

import java.io.StringReader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

/**
 * XSLT over Apache Xalan-J (in the spirit of DaCapo xalan): setup generates deterministic XML
 * catalogues and compiles one stylesheet (grouping, sorting, numbering, string functions) with
 * Xalan's interpretive processor (org.apache.xalan.processor.TransformerFactoryImpl, named
 * explicitly so neither the JDK's XSLTC nor Saxon is used); each iteration transforms every
 * document on several threads. Options: --docs N (default 24), --items N per doc (default 600),
 * --threads T (default 2).
 */
public final class XalanXslt implements Workload {
    private static final String XSL = String.join("\n",
        "<xsl:stylesheet version='1.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>",
        "<xsl:output method='html' indent='yes'/>",
        "<xsl:key name='by-cat' match='item' use='@cat'/>",
        "<xsl:template match='/catalog'>",
        " <html><body><h1><xsl:value-of select='@name'/></h1>",
        "  <xsl:for-each select=\"item[generate-id() = generate-id(key('by-cat', @cat)[1])]\">",
        "   <xsl:sort select='@cat'/>",
        "   <h2><xsl:value-of select='@cat'/> (<xsl:value-of select=\"count(key('by-cat', @cat))\"/>)</h2>",
        "   <table><xsl:for-each select=\"key('by-cat', @cat)\"><xsl:sort select='price' data-type='number' order='descending'/>",
        "    <tr><td><xsl:number/></td><td><xsl:value-of select='translate(name, \"abcdefghijklmnopqrstuvwxyz\", \"ABCDEFGHIJKLMNOPQRSTUVWXYZ\")'/></td>",
        "     <td><xsl:value-of select='format-number(price, \"#,##0.00\")'/></td>",
        "     <td><xsl:value-of select='substring(normalize-space(desc), 1, 60)'/></td>",
        "     <td><xsl:value-of select=\"string-length(concat(name, desc))\"/></td></tr>",
        "   </xsl:for-each></table>",
        "  </xsl:for-each>",
        "  <p>total <xsl:value-of select='format-number(sum(item/price), \"#,##0.00\")'/></p>",
        " </body></html>",
        "</xsl:template>",
        "</xsl:stylesheet>");

    private Templates templates;
    private final List<String> docs = new ArrayList<>();
    private int threads;

    @Override
    public void setup(Args args) throws Exception {
        int n = args.getInt("docs", 24);
        int items = args.getInt("items", 600);
        threads = args.getInt("threads", 2);
        long seed = args.getLong("seed", 42);
        Corpus c = new Corpus(5000, seed);
        SplittableRandom r = new SplittableRandom(seed + 3);
        for (int d = 0; d < n; d++) {
            StringBuilder sb = new StringBuilder("<catalog name='catalogue ").append(d).append("'>\n");
            for (int i = 0; i < items; i++) {
                sb.append("<item cat='").append(c.words[r.nextInt(40)]).append("'><name>").append(c.sentence(r, 2))
                  .append("</name><price>").append(r.nextInt(100000) / 100.0).append("</price><desc>")
                  .append(c.sentence(r, 10 + r.nextInt(30))).append("</desc></item>\n");
            }
            docs.add(sb.append("</catalog>").toString());
        }
        TransformerFactory tf = new org.apache.xalan.processor.TransformerFactoryImpl();
        templates = tf.newTemplates(new StreamSource(new StringReader(XSL)));
    }

    private long transformSome(int thread) throws Exception {
        long sum = 0;
        for (int i = thread; i < docs.size(); i += threads) {
            Transformer t = templates.newTransformer();
            StringWriter out = new StringWriter();
            t.transform(new StreamSource(new StringReader(docs.get(i))), new StreamResult(out));
            sum += out.getBuffer().length();
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
                fs.add(ex.submit(() -> transformSome(tt)));
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
        if (checksum <= 0) return "empty output";
        if (first < 0) first = checksum;
        return checksum == first ? null : "output size changed between iterations: " + checksum + " vs " + first;
    }
}
