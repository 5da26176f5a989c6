package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The per-text memos of the wrapper: bounded, safe under concurrency, never a different answer. */
class TextMemoTest {

  /**
   * SQL texts of every kind the classifier tells apart, and random text around its tricky words.
   */
  private static List<String> corpus() {
    List<String> texts =
        new ArrayList<>(
            List.of(
                "select 1",
                "SELECT abalance FROM s.pgbench_accounts WHERE aid = ?",
                "UPDATE s.pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
                "insert into t values (1); commit",
                "select 1; rollback to s1; select 2",
                "rollback to s1; rollback",
                "commit; delete from t",
                "select * from t for update",
                "select nextval('s')",
                "select 'x\\', '; delete from t; --'",
                "with x as (delete from t returning *) select * from x",
                "/* commit */ select 'rollback'",
                "COMMIT",
                "savepoint s1",
                "select \"unterminated",
                ""));
    String[] pieces = {
      "select",
      "update",
      "delete",
      "insert",
      "into",
      "commit",
      "rollback",
      "to",
      "for",
      "share",
      "(",
      ")",
      ";",
      "'",
      "\\",
      "\"",
      "$$",
      "--",
      "\n",
      "/*",
      "*/",
      "f",
      "t",
      " ",
      "nextval"
    };
    Random random = new Random(7);
    for (int i = 0; i < 3_000; i++) {
      StringBuilder sql = new StringBuilder();
      int n = random.nextInt(12);
      for (int k = 0; k < n; k++) {
        sql.append(pieces[random.nextInt(pieces.length)]).append(' ');
      }
      texts.add(sql.toString());
    }
    return texts;
  }

  @Test
  void aClassificationFromTheMemoIsTheClassificationOfTheText() {
    for (String sql : corpus()) {
      SqlClassifier.Classification fresh = SqlClassifier.classifyText(sql);
      assertThat(SqlClassifier.classify(sql)).as(sql).isEqualTo(fresh);
      // a hit, found by an equal text that is another String object
      assertThat(SqlClassifier.classify(new String(sql.toCharArray()))).as(sql).isEqualTo(fresh);
      assertThat(SqlClassifier.classify(sql)).as(sql).isEqualTo(fresh);
    }
    assertThat(SqlClassifier.memoSize()).isLessThanOrEqualTo(SqlClassifier.MEMO_ENTRIES);
  }

  @Test
  void theTablesATextWritesComeFromTheMemoUnchanged() {
    TableGuards guards = new TableGuards();
    guards.declare("ledger", "ledger-resource");
    guards.declare("s.\"Entries\"", null);
    String sql = "update s.ledger set x = 1; insert into \"Entries\" values (1)";
    for (int i = 0; i < 3; i++) {
      assertThat(guards.targets(sql))
          .containsExactly(
              new TableGuards.Guard("ledger", "ledger-resource"),
              new TableGuards.Guard("Entries", null));
      assertThat(guards.targets("select * from ledger")).isEmpty();
    }
    // a declaration made after the text was first seen counts at once: only the text's tables are
    // kept, the declarations are looked up at each execution
    String other = "delete from audit where id = 1";
    assertThat(guards.targets(other)).isEmpty();
    guards.declare("audit", "audit-resource");
    assertThat(guards.targets(other))
        .containsExactly(new TableGuards.Guard("audit", "audit-resource"));
    assertThat(TableGuards.writtenTables(sql)).containsExactly("ledger", "Entries");
  }

  /**
   * The guards of a text, kept per text, are those of the declarations made so far: on the corpus,
   * before and after further declarations, each the same as looking them up afresh.
   */
  @Test
  void theGuardsOfATextFromTheMemoAreThoseOfTheDeclarationsNow() {
    TableGuards guards = new TableGuards();
    guards.declare("t", "t-resource");
    // fewer texts than the memo keeps: answers stay in it from one declaration to the next
    List<String> corpus = new ArrayList<>(corpus().subList(0, SqlClassifier.MEMO_ENTRIES / 2));
    corpus.add("update only s.\"T\" set x = 1; delete from f; insert into t select 1");
    String[][] declarations = {{"f", null}, {"t", "t-other"}, {"into", "into-resource"}};
    for (String[] declaration : declarations) {
      for (String sql : corpus) {
        List<TableGuards.Guard> fresh = guards.lookUp(sql);
        assertThat(guards.targets(sql)).as(sql).isEqualTo(fresh);
        assertThat(guards.targets(new String(sql.toCharArray()))).as(sql).isEqualTo(fresh);
      }
      guards.declare(declaration[0], declaration[1]);
    }
    for (String sql : corpus) {
      assertThat(guards.targets(sql)).as(sql).isEqualTo(guards.lookUp(sql));
    }
    assertThat(guards.targets("delete from f; update t set x = 1"))
        .containsExactlyInAnyOrder(
            new TableGuards.Guard("f", null),
            new TableGuards.Guard("t", "t-resource"),
            new TableGuards.Guard("t", "t-other"));
  }

  /**
   * A text past the per-text length bound (a long native query) is searched once, not at every
   * execution, and a declaration made after it still counts at once.
   */
  @Test
  void aLongTextIsSearchedOnce() {
    TableGuards guards = new TableGuards();
    guards.declare("account", "account-resource");
    String sql =
        "UPDATE account SET note = '"
            + "x".repeat(4 * SqlClassifier.MEMO_TEXT_LENGTH)
            + "' WHERE id = ?; DELETE FROM audit";
    long before = WriteTargets.searches();
    for (int i = 0; i < 3; i++) {
      assertThat(guards.targets(sql))
          .containsExactly(new TableGuards.Guard("account", "account-resource"));
      assertThat(guards.targets(new String(sql.toCharArray())))
          .containsExactly(new TableGuards.Guard("account", "account-resource"));
    }
    guards.declare("audit", null);
    assertThat(guards.targets(sql))
        .containsExactly(
            new TableGuards.Guard("account", "account-resource"),
            new TableGuards.Guard("audit", null));
    assertThat(WriteTargets.searches() - before).as("searches of the long text").isEqualTo(1);
  }

  /** Bounded by characters in all: a long text is kept, and the texts kept never pass the bound. */
  @Test
  void aMemoBoundedByCharactersKeepsLongTextsWithinItsBound() {
    AtomicInteger computed = new AtomicInteger();
    TextMemo<Integer> memo =
        TextMemo.boundedByCharacters(
            text -> {
              computed.incrementAndGet();
              return text.length();
            },
            100,
            1_000);
    String longText = "y".repeat(600);
    assertThat(memo.get(longText)).isEqualTo(600);
    assertThat(memo.get(new String(longText.toCharArray()))).isEqualTo(600);
    assertThat(computed).as("a long text within the bound is computed once").hasValue(1);
    Random random = new Random(3);
    for (int i = 0; i < 2_000; i++) {
      String text = i + "z".repeat(random.nextInt(300));
      assertThat(memo.get(text)).isEqualTo(text.length());
      assertThat(memo.characters()).isLessThanOrEqualTo(1_000);
      assertThat(memo.size()).isLessThanOrEqualTo(100);
    }
    computed.set(0);
    String tooLong = "w".repeat(1_001);
    memo.get(tooLong);
    memo.get(tooLong);
    assertThat(computed).as("a text past the whole bound is computed every time").hasValue(2);
    assertThat(memo.characters()).isLessThanOrEqualTo(1_000);
    assertThatThrownBy(() -> TextMemo.boundedByCharacters(String::length, 1, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxCharacters must not be negative");
  }

  @Test
  void theMemoKeepsAtMostItsBoundAndNoLongText() {
    AtomicInteger computed = new AtomicInteger();
    TextMemo<Integer> memo =
        new TextMemo<>(
            text -> {
              computed.incrementAndGet();
              return text.length();
            },
            100,
            50);
    for (int i = 0; i < 1_000; i++) {
      assertThat(memo.get("text " + i)).isEqualTo(("text " + i).length());
      assertThat(memo.size()).isLessThanOrEqualTo(100);
    }
    computed.set(0);
    int before = memo.size();
    assertThat(memo.get("x".repeat(51))).isEqualTo(51);
    assertThat(memo.get("x".repeat(51))).isEqualTo(51);
    assertThat(computed).as("a text over the length bound is computed every time").hasValue(2);
    assertThat(memo.size()).as("and never kept").isEqualTo(before);
    memo.get("kept");
    memo.get("kept");
    assertThat(computed).as("a kept text is computed once").hasValue(3);
  }

  @Test
  void manyThreadsAtOnceGetTheRightAnswersAndTheBoundHolds() throws Exception {
    int threads = 8;
    TextMemo<SqlClassifier.Classification> memo =
        new TextMemo<>(SqlClassifier::classifyText, 64, 4096);
    List<String> texts = corpus();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int offset = t * 97;
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  int maxSize = 0;
                  for (int i = 0; i < 20_000; i++) {
                    String sql = texts.get((offset + i * 31) % texts.size());
                    SqlClassifier.Classification got = memo.get(sql);
                    if (!got.equals(SqlClassifier.classifyText(sql))) {
                      throw new AssertionError("wrong classification of " + sql + ": " + got);
                    }
                    maxSize = Math.max(maxSize, memo.size());
                  }
                  return maxSize;
                }));
      }
      start.countDown();
      for (Future<Integer> r : results) {
        assertThat(r.get(1, TimeUnit.MINUTES))
            .as("entries seen by a thread never pass the bound")
            .isLessThanOrEqualTo(64);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(memo.size()).isLessThanOrEqualTo(64);
  }

  /**
   * Threads that finish computing together, with the memo one entry short of its bound: every one
   * of them finds room by its own size check, so the insertions must be serialised for the bound to
   * hold (an unserialised check-then-put left 8 threads' entries in a memo of 4).
   */
  @Test
  void insertionsThatArriveTogetherAtTheBoundStillKeepIt() throws Exception {
    int threads = 8;
    CyclicBarrier computedTogether = new CyclicBarrier(threads);
    TextMemo<Integer> memo =
        new TextMemo<>(
            text -> {
              if (text.startsWith("new ")) {
                try {
                  computedTogether.await(1, TimeUnit.MINUTES);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }
              return text.length();
            },
            4,
            100);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 200; round++) {
        memo.get("old a " + round);
        memo.get("old b " + round);
        memo.get("old c " + round);
        assertThat(memo.size()).isLessThanOrEqualTo(4);
        List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          String text = "new " + round + " " + t;
          results.add(pool.submit(() -> memo.get(text)));
        }
        for (int t = 0; t < threads; t++) {
          assertThat(results.get(t).get(1, TimeUnit.MINUTES))
              .isEqualTo(("new " + round + " " + t).length());
        }
        assertThat(memo.size())
            .as("round %d: entries after 8 insertions at once", round)
            .isLessThanOrEqualTo(4);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void badBoundsAreRefused() {
    assertThatThrownBy(() -> new TextMemo<>(String::length, 0, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxEntries must be positive");
    assertThatThrownBy(() -> new TextMemo<>(String::length, 10, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxTextLength not negative");
  }
}
