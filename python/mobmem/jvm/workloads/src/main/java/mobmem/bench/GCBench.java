package mobmem.bench;

/**
 * GCBench (after Ellis, Kovac and Boehm): binary trees of Node{left,right,i,j}. A stretch tree of
 * depth 18, a long-lived tree of depth 16 and an array of 500,000 doubles kept alive, then for
 * depths 4..16 step 2, 2*TreeSize(18)/TreeSize(d) trees built top-down (populate) and as many
 * bottom-up (makeTree), with TreeSize(d) = 2^(d+1) - 1. The checksum counts the nodes allocated.
 */
public final class GCBench implements Workload {
    static final int STRETCH_TREE_DEPTH = 18;
    static final int LONG_LIVED_TREE_DEPTH = 16;
    static final int ARRAY_SIZE = 500_000;
    static final int MIN_TREE_DEPTH = 4;
    static final int MAX_TREE_DEPTH = 16;

    static final class Node {
        Node left, right;
        int i, j;

        Node(Node l, Node r) {
            left = l;
            right = r;
        }

        Node() {}
    }

    private long allocated;
    // Kept alive across the iteration, as in the original.
    private Node longLived;
    private double[] array;

    static int treeSize(int depth) {
        return (1 << (depth + 1)) - 1;
    }

    static int numIters(int depth) {
        return 2 * treeSize(STRETCH_TREE_DEPTH) / treeSize(depth);
    }

    private void populate(int depth, Node node) {
        if (depth <= 0) return;
        depth--;
        node.left = new Node();
        node.right = new Node();
        allocated += 2;
        populate(depth, node.left);
        populate(depth, node.right);
    }

    private Node makeTree(int depth) {
        allocated++;
        if (depth <= 0) return new Node();
        return new Node(makeTree(depth - 1), makeTree(depth - 1));
    }

    private void timeConstruction(int depth) {
        int iters = numIters(depth);
        for (int i = 0; i < iters; i++) {
            Node temp = new Node();
            allocated++;
            populate(depth, temp);
        }
        for (int i = 0; i < iters; i++) {
            Node temp = makeTree(depth);
            if (temp == null) throw new IllegalStateException();
        }
    }

    static int count(Node n) {
        return n == null ? 0 : 1 + count(n.left) + count(n.right);
    }

    @Override
    public void setup(Args args) {}

    @Override
    public long iterate() {
        allocated = 0;
        Node stretch = makeTree(STRETCH_TREE_DEPTH);
        if (count(stretch) != treeSize(STRETCH_TREE_DEPTH)) throw new IllegalStateException("stretch");
        stretch = null;
        longLived = new Node();
        allocated++;
        populate(LONG_LIVED_TREE_DEPTH, longLived);
        array = new double[ARRAY_SIZE];
        for (int i = 0; i < ARRAY_SIZE / 2; i++) array[i] = 1.0 / i;
        for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2) timeConstruction(d);
        if (longLived == null || array[1000] != 1.0 / 1000) throw new IllegalStateException("lost live data");
        if (count(longLived) != treeSize(LONG_LIVED_TREE_DEPTH)) throw new IllegalStateException("long-lived tree");
        return allocated;
    }

    static long expected() {
        long n = treeSize(STRETCH_TREE_DEPTH) + treeSize(LONG_LIVED_TREE_DEPTH);
        for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2) n += 2L * numIters(d) * treeSize(d);
        return n;
    }

    @Override
    public String validate(long checksum) {
        return checksum == expected() ? null : "allocated " + checksum + " nodes, expected " + expected();
    }
}
