/**
 * A bare JNI call of nextId's shape ({@code long f(long)}) and the same with one compare-and-swap
 * in C, the best of 20,000 batches of 2,000 calls each: bench/java/floor/run.sh.
 */
public class Crit {
  static native long bare(long h);
  static native long cas(long h);
  public static void main(String[] a) {
    System.load(System.getProperty("crit.lib"));
    int n = 2_000;
    long sink = 0;
    for (int round = 0; round < 8; round++) {
      long bestBare = Long.MAX_VALUE, bestCas = Long.MAX_VALUE;
      for (int r = 0; r < 20_000; r++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) sink += bare(i);
        long t1 = System.nanoTime();
        for (int i = 0; i < n; i++) sink += cas(i);
        long t2 = System.nanoTime();
        bestBare = Math.min(bestBare, t1 - t0);
        bestCas = Math.min(bestCas, t2 - t1);
      }
      if (round >= 4) System.out.printf("bare %.2f ns  bare+CAS %.2f ns%n", bestBare / (double) n, bestCas / (double) n);
    }
    if (sink == 1) System.out.println();
  }
}
