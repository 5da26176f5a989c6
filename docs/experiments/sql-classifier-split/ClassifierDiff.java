package dev.fencing.jdbc;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Compares SqlClassifier with the single-class version it was split from (OldSqlClassifier, made
 * by run.sh from commit 79f062e): the classification of every string literal of the given test
 * sources, of 2,000,000 random token strings and of 500,000 mutations of the literals must be the
 * same; then the CPU time of fresh classifications (no memo), both versions alternating.
 */
public final class ClassifierDiff {
  private static final String[] PIECES = {
    "select", "SELECT", "insert", "update", "delete", "into", "for", "share", "key", "no", "(", ")",
    ",", ".", "::", ";", "'a'", "'a\\'b'", "E'x\\'y'", "$$x$$", "$t$ y $t$", "$1", "\"q\"", "--c\n",
    "/* /* */ */", "explain", "analyze", "(analyze off)", "declare", "cursor", "copy", "to", "from",
    "program", "stdout", "with", "as", "materialized", "not", "recursive", "values", "table", "t",
    "f", "now", "count", "nextval", "pg_catalog", "commit", "rollback", "work", "transaction",
    "savepoint", "prepare", "end", "abort", "begin", "group", "by", "rollup", "sets", "grouping",
    "order", "1e5", "0", "1.5", "x", "'", "\"", "/*", "$", "$a", "\\", "over", "lateral", "unnest",
    "u", "returning", "set", "show", "é"
  };

  public static void main(String[] args) throws Exception {
    List<String> corpus = new ArrayList<>();
    Pattern literal = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
    for (String file : args) {
      Matcher m = literal.matcher(Files.readString(Path.of(file)));
      while (m.find()) {
        corpus.add(
            m.group(1).replace("\\n", "\n").replace("\\\"", "\"").replace("\\\\", "\\"));
      }
    }
    Random random = new Random(42);
    int compared = 0;
    int differences = 0;
    for (String sql : corpus) {
      compared++;
      differences += compare(sql);
    }
    for (int i = 0; i < 2_000_000; i++) {
      StringBuilder b = new StringBuilder();
      for (int k = 1 + random.nextInt(14); k > 0; k--) {
        b.append(PIECES[random.nextInt(PIECES.length)]).append(random.nextInt(4) == 0 ? "" : " ");
      }
      compared++;
      differences += compare(b.toString());
      if (i % 4 == 0 && !corpus.isEmpty()) {
        String c = corpus.get(random.nextInt(corpus.size()));
        int at = random.nextInt(c.length() + 1);
        String mutated =
            c.substring(0, at)
                + PIECES[random.nextInt(PIECES.length)]
                + c.substring(Math.min(c.length(), at + random.nextInt(3)));
        compared++;
        differences += compare(mutated);
      }
    }
    System.out.printf(
        "compared %d texts (%d from the tests), differences %d%n",
        compared, corpus.size(), differences);

    List<String> bench = corpus.subList(0, Math.min(corpus.size(), 400));
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<Double> ratios = new ArrayList<>();
    int sink = 0;
    for (int round = 0; round < 30; round++) {
      long oldCpu = 0;
      long newCpu = 0;
      for (int half = 0; half < 2; half++) {
        boolean old = (round + half) % 2 == 0;
        long start = threads.getCurrentThreadCpuTime();
        for (int rep = 0; rep < 500; rep++) {
          for (String sql : bench) {
            sink +=
                old
                    ? OldSqlClassifier.classifyText(sql).hashCode()
                    : SqlClassifier.classifyText(sql).hashCode();
          }
        }
        long cpu = threads.getCurrentThreadCpuTime() - start;
        if (old) {
          oldCpu += cpu;
        } else {
          newCpu += cpu;
        }
      }
      if (round >= 5) { // warm-up
        ratios.add(newCpu / (double) oldCpu);
      }
    }
    Collections.sort(ratios);
    System.out.printf(
        "CPU time new/old, median of %d rounds: %.3f (min %.3f, max %.3f) [%d]%n",
        ratios.size(), ratios.get(ratios.size() / 2), ratios.get(0), ratios.get(ratios.size() - 1),
        sink & 1);
  }

  private static int compare(String sql) {
    String old = OldSqlClassifier.classifyText(sql).toString();
    String now = SqlClassifier.classifyText(sql).toString();
    if (!old.equals(now)) {
      System.out.println("DIFFERENT: " + sql + "\n  old " + old + "\n  new " + now);
      return 1;
    }
    return 0;
  }
}
