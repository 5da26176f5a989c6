package dev.fencing.benchmark.growth;

import dev.fencing.benchmark.measure.Samples;
import dev.fencing.benchmark.report.Figure;
import dev.fencing.benchmark.report.Section;
import dev.fencing.benchmark.report.Variant;
import dev.fencing.jdbc.FencingToken;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Protected tables: a large INSERT ... SELECT into an unprotected table, a statement-trigger
 * protected one ({@code protect}) and a per-row protected one ({@code protect_rows}), interleaved;
 * and where the per-row trigger's time goes.
 */
final class RowTriggerCost {
  private static final String PLAIN = "bench_trig_plain";
  private static final String STATEMENT = "bench_trig_statement";
  private static final String ROWS = "bench_trig_rows";
  private static final String EMPTY = "bench_trig_empty";
  private static final String DEFINER = "bench_trig_definer";

  /** The id of what the per-row trigger adds per row (issue 14's target). */
  static final String ROW_TRIGGER_ID = "growth-row-triggers/row-trigger-us";

  /** Issue 14: the per-row trigger at most 3 µs per row. */
  static final double TARGET_ROW_TRIGGER_MICROS = 3.0;

  private RowTriggerCost() {}

  static Section measure(Workbench w, FencingToken hot, FencingToken row) throws SQLException {
    Map<String, String> slugs =
        Map.of(
            PLAIN, "unprotected",
            STATEMENT, "statement-trigger",
            ROWS, "row-trigger",
            EMPTY, "empty-plpgsql-row-trigger",
            DEFINER, "empty-plpgsql-row-trigger-definer");
    Map<String, String> tables = new LinkedHashMap<>();
    tables.put(PLAIN, "unprotected");
    tables.put(STATEMENT, "statement trigger (protect)");
    tables.put(ROWS, "per-row trigger (protect_rows)");
    tables.put(EMPTY, "empty plpgsql row trigger");
    tables.put(DEFINER, "empty plpgsql row trigger, SECURITY DEFINER + SET search_path");
    Map<String, String> pieces = new LinkedHashMap<>();
    pieces.put("loop", "");
    pieces.put(
        "resource id and secret lookup (one query)",
        "SELECT r.id, s.secret INTO v_id, v_secret FROM fencing.resource r, fencing.marker_secret s"
            + " WHERE r.name = '"
            + row.resource()
            + "';");
    pieces.put(
        "SHA-256 MAC",
        "v_text := left(encode(sha256(convert_to('secret:' || pg_current_xact_id() || ':' || i"
            + " || ':123', 'UTF8')), 'hex'), 32);");
    pieces.put("to_jsonb(NEW) ->> column", "v_row.id := i; v_text := to_jsonb(v_row) ->> 'who';");
    pieces.put(
        "marker parse (current_setting, position, string_to_array)",
        "v_checked := current_setting('fencing.checked', true);"
            + " v_pos := position(',5:' IN ',' || v_checked);"
            + " v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');");
    int n = w.scale.triggerRows();
    Map<String, List<Double>> perRow = new LinkedHashMap<>();
    tables.values().forEach(name -> perRow.put(name, new ArrayList<>()));
    Map<String, List<Double>> piecePerRow = new LinkedHashMap<>();
    pieces.keySet().forEach(name -> piecePerRow.put(name, new ArrayList<>()));
    try (Connection c = w.database.getConnection();
        Statement s = c.createStatement()) {
      setUp(s, hot, row);
      List<String> order = new ArrayList<>(tables.keySet());
      for (int round = 0; round < w.scale.rounds(); round++) {
        java.util.Collections.rotate(order, 1);
        for (String table : order) {
          perRow.get(tables.get(table)).add(insert(c, s, table, hot, row, n) / n);
        }
        double loop = 0;
        for (Map.Entry<String, String> piece : pieces.entrySet()) {
          double micros = loop(s, piece.getValue(), n) / n;
          if (piece.getKey().equals("loop")) {
            loop = micros;
          }
          piecePerRow.get(piece.getKey()).add(micros - (piece.getKey().equals("loop") ? 0 : loop));
        }
      }
      tearDown(s);
    }
    String base = tables.get(PLAIN);
    List<Variant> variants = new ArrayList<>();
    for (Map.Entry<String, String> table : tables.entrySet()) {
      String name = table.getValue();
      variants.add(
          new Variant(
              "growth-row-triggers/" + slugs.get(table.getKey()),
              name,
              "µs per row",
              perRow.get(name),
              name.equals(base) ? null : base,
              false,
              null));
    }
    List<Figure> figures =
        List.of(
            new Figure(
                ROW_TRIGGER_ID,
                "what the per-row trigger (protect_rows) adds per row: median over the rounds of"
                    + " (protected - unprotected) per row",
                "µs per row",
                Samples.median(added(perRow.get(tables.get(ROWS)), perRow.get(base))),
                TARGET_ROW_TRIGGER_MICROS,
                false),
            new Figure(
                "growth-row-triggers/statement-trigger-us",
                "what the statement trigger (protect) adds per row, the same way",
                "µs per row",
                Samples.median(added(perRow.get(tables.get(STATEMENT)), perRow.get(base))),
                null,
                false));
    List<String> findings = new ArrayList<>();
    double plain = Samples.median(perRow.get(base));
    double rows = Samples.median(perRow.get(tables.get(ROWS)));
    double statement = Samples.median(perRow.get(tables.get(STATEMENT)));
    double empty = Samples.median(perRow.get(tables.get(EMPTY)));
    double definer = Samples.median(perRow.get(tables.get(DEFINER)));
    findings.add(
        String.format(
            Locale.ROOT,
            "Per row: unprotected %.2f µs, statement trigger %.2f µs (+%.2f), per-row trigger"
                + " %.2f µs (+%.2f, %.1fx).",
            plain,
            statement,
            statement - plain,
            rows,
            rows - plain,
            rows / plain));
    StringBuilder breakdown =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "Where the per-row trigger's +%.2f µs goes (medians; the pieces overlap, plpgsql"
                    + " loop overhead subtracted): calling any plpgsql row trigger +%.2f µs;"
                    + " SECURITY DEFINER with SET search_path on it +%.2f µs more",
                rows - plain,
                empty - plain,
                definer - empty));
    for (String piece : pieces.keySet()) {
      if (!piece.equals("loop")) {
        breakdown.append(
            String.format(
                Locale.ROOT, "; %s %.2f µs", piece, Samples.median(piecePerRow.get(piece))));
      }
    }
    findings.add(breakdown + ".");
    findings.add(
        "What would cut it: check once per statement instead of once per row, with an AFTER"
            + " ... FOR EACH STATEMENT trigger REFERENCING NEW TABLE / OLD TABLE that checks each"
            + " distinct resource of the transition table once (one set-wise lookup and one MAC"
            + " per resource, not per row); short of that, remember the last resource's verdict"
            + " so consecutive rows of one resource skip the lookup and the MAC, and read the"
            + " column directly instead of through to_jsonb(NEW). SECURITY DEFINER with a pinned"
            + " search_path stays: it keeps the secret unreadable.");
    String method =
        String.format(
            Locale.ROOT,
            "%s mode, %d rounds, the order of the tables rotated each round. In one transaction,"
                + " after check_tokens for both resources, INSERT INTO t SELECT g, 1 FROM"
                + " generate_series(1, %,d) g, timed, then rolled back; t is unprotected,"
                + " protected by a statement trigger (protect), by a per-row trigger"
                + " (protect_rows, resource prefix || who), or carries an empty plpgsql row"
                + " trigger (plain, or SECURITY DEFINER with SET search_path like the fence's)."
                + " The pieces of the per-row fast path are timed in plpgsql loops of %,d"
                + " iterations (DO blocks), minus the empty loop.",
            w.scale.name(),
            w.scale.rounds(),
            n,
            n);
    return new Section(
        "growth-row-triggers",
        "Protected tables: per-row trigger cost",
        method,
        variants,
        List.of(),
        figures,
        List.of(),
        findings);
  }

  /** Round by round, {@code variant - baseline}. */
  private static List<Double> added(List<Double> variant, List<Double> baseline) {
    List<Double> added = new ArrayList<>();
    for (int i = 0; i < variant.size(); i++) {
      added.add(variant.get(i) - baseline.get(i));
    }
    return added;
  }

  private static void setUp(Statement s, FencingToken hot, FencingToken row) throws SQLException {
    tearDown(s);
    for (String t : List.of(PLAIN, STATEMENT, ROWS, EMPTY, DEFINER)) {
      s.execute("CREATE TABLE " + t + " (id int, who int)");
    }
    s.execute(
        "CREATE FUNCTION bench_trig_empty_fn() RETURNS trigger LANGUAGE plpgsql"
            + " AS $$ BEGIN RETURN NEW; END $$");
    s.execute(
        "CREATE FUNCTION bench_trig_definer_fn() RETURNS trigger LANGUAGE plpgsql"
            + " SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
            + " AS $$ BEGIN RETURN NEW; END $$");
    s.execute(
        "CREATE TRIGGER t BEFORE INSERT ON "
            + EMPTY
            + " FOR EACH ROW EXECUTE FUNCTION bench_trig_empty_fn()");
    s.execute(
        "CREATE TRIGGER t BEFORE INSERT ON "
            + DEFINER
            + " FOR EACH ROW EXECUTE FUNCTION bench_trig_definer_fn()");
    String prefix = row.resource().substring(0, row.resource().length() - 1);
    s.execute("SELECT fencing.protect('" + STATEMENT + "', '" + hot.resource() + "')");
    s.execute("SELECT fencing.protect_rows('" + ROWS + "', 'who', '" + prefix + "')");
  }

  private static void tearDown(Statement s) throws SQLException {
    for (String t : List.of(STATEMENT, ROWS)) {
      s.execute(
          "SELECT fencing.unprotect(oid::regclass) FROM pg_class WHERE relname = '"
              + t
              + "' AND relnamespace = current_schema()::regnamespace");
    }
    s.execute(
        "DROP TABLE IF EXISTS "
            + String.join(", ", List.of(PLAIN, STATEMENT, ROWS, EMPTY, DEFINER)));
    s.execute("DROP FUNCTION IF EXISTS bench_trig_empty_fn(), bench_trig_definer_fn()");
  }

  /**
   * Microseconds of one INSERT ... SELECT of {@code n} rows, in a checked, rolled back transaction.
   */
  private static double insert(
      Connection c, Statement s, String table, FencingToken hot, FencingToken row, int n)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      try (PreparedStatement check =
          c.prepareStatement("SELECT fencing.check_tokens(?::text[], ?::bigint[])")) {
        check.setArray(1, c.createArrayOf("text", new Object[] {hot.resource(), row.resource()}));
        check.setArray(2, c.createArrayOf("bigint", new Object[] {hot.value(), row.value()}));
        check.execute();
      }
      long t0 = System.nanoTime();
      s.execute("INSERT INTO " + table + " SELECT g, 1 FROM generate_series(1, " + n + ") g");
      return (System.nanoTime() - t0) / 1e3;
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }

  /** Microseconds of a plpgsql loop of {@code n} iterations running {@code body}. */
  private static double loop(Statement s, String body, int n) throws SQLException {
    String block =
        "DO $$ DECLARE v_id bigint; v_secret text; v_text text; v_row "
            + PLAIN
            + "; v_checked text; v_pos int; v_parts text[];"
            + " BEGIN PERFORM set_config('fencing.checked', '5:123:abcdef,', true);"
            + " v_row.who := 1;"
            + " FOR i IN 1.."
            + n
            + " LOOP "
            + body
            + " END LOOP; END $$";
    long t0 = System.nanoTime();
    s.execute(block);
    return (System.nanoTime() - t0) / 1e3;
  }
}
